/** A file the clerk chose, with its path in the chosen folder ("2026年移交/副本/第0012页.jpg"), or its name. */
export interface ChosenFile {
  file: File;
  path: string;
}

/** Files of a file input: a folder input gives each file's path in the folder. */
export function filesFromInput(list: FileList | null): ChosenFile[] {
  return Array.from(list ?? [], (file) => ({ file, path: file.webkitRelativePath || file.name }));
}

/**
 * Files dropped on the page, folders walked to the bottom (the entries API: a drop's
 * DataTransfer lists only its top-level items). Must be called during the drop event.
 */
export function filesFromDrop(data: DataTransfer): Promise<ChosenFile[]> {
  const entries = Array.from(data.items, (item) => item.webkitGetAsEntry?.()).filter(
    (entry): entry is FileSystemEntry => !!entry,
  );
  // Without the entries API (or for plain files), the files themselves.
  if (entries.length === 0) return Promise.resolve(filesFromInput(data.files));
  return Promise.all(entries.map((entry) => walk(entry))).then((lists) => lists.flat());
}

async function walk(entry: FileSystemEntry): Promise<ChosenFile[]> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    return [{ file, path: entry.fullPath.replace(/^\/+/, '') || file.name }];
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const children: FileSystemEntry[] = [];
  // readEntries answers in pieces (100 at a time in Chromium) until it answers nothing.
  for (;;) {
    const piece = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (piece.length === 0) break;
    children.push(...piece);
  }
  const lists = await Promise.all(children.map((child) => walk(child)));
  return lists.flat();
}
