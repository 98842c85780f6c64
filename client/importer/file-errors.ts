/** The reason a file-system call failed, in words a clerk can act on. */
export function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'no such file (moved or deleted?)';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied: the importer may not read it';
    case 'ELOOP':
      return 'symbolic link loop: the link leads back to itself';
    case 'ENAMETOOLONG':
      return 'path too long for this system';
    case 'EISDIR':
      return 'a directory, not a file';
    case 'EIO':
      return 'read error (input/output error on the disk or share)';
    default:
      return e.message ?? String(err);
  }
}
