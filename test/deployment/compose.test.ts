import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { loadCompose, readRepoFile, ROOT } from './files.js';
import type { Service, ServiceSecret } from './files.js';

const PRODUCTION = [
  'mongo-keyfile',
  'mongo1',
  'mongo2',
  'mongo3',
  'mongo-init',
  'app1',
  'app2',
  'fingerprints',
  'nginx',
];
const PASSWORDS = ['MONGO_ADMIN_PASSWORD', 'ARCHIVE_DB_PASSWORD', 'MONGO_BACKUP_PASSWORD'];

function service(name: string, env: Record<string, string> = {}): Service {
  const found = loadCompose('docker-compose.yml', env).services[name];
  assert.ok(found, `service ${name} in docker-compose.yml`);
  return found;
}

function secretOf(s: Service, source: string): ServiceSecret | undefined {
  for (const entry of s.secrets ?? []) {
    const secret = typeof entry === 'string' ? { source: entry } : entry;
    if (secret.source === source) return secret;
  }
  return undefined;
}

/** Seconds of a compose duration such as "60s", "1m30s". */
function seconds(duration: string | undefined): number {
  assert.ok(duration, 'a duration');
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+)(h|m|s)/g)) total += Number(n) * { h: 3600, m: 60, s: 1 }[unit!]!;
  return total;
}

describe('docker-compose.yml, profile production', () => {
  it('has every production service in the profile', () => {
    const { services } = loadCompose('docker-compose.yml');
    for (const name of PRODUCTION) assert.deepEqual(services[name]?.profiles, ['production'], name);
  });

  it('passes the passwords as Docker secrets taken from .env, never as container environment', () => {
    const compose = loadCompose('docker-compose.yml', {
      MONGO_ADMIN_PASSWORD: 'adminadminadminadmin',
      ARCHIVE_DB_PASSWORD: 'archivearchivearchive',
      MONGO_BACKUP_PASSWORD: 'backupbackupbackup',
    });
    assert.deepEqual(compose.secrets, {
      mongo_admin_password: { environment: 'MONGO_ADMIN_PASSWORD' },
      archive_db_password: { environment: 'ARCHIVE_DB_PASSWORD' },
      mongo_backup_password: { environment: 'MONGO_BACKUP_PASSWORD' },
    });
    for (const [name, s] of Object.entries(compose.services))
      for (const [variable, value] of Object.entries(s.environment ?? {}))
        assert.doesNotMatch(String(value), /adminadmin|archivearchive|backupbackup/, `${name}: ${variable}`);
  });

  it('gives mongo-init the three passwords as files, and the instances only their own', () => {
    const init = service('mongo-init');
    assert.deepEqual(init.environment, {
      MONGO_ADMIN_PASSWORD_FILE: '/run/secrets/mongo_admin_password',
      ARCHIVE_DB_PASSWORD_FILE: '/run/secrets/archive_db_password',
      MONGO_BACKUP_PASSWORD_FILE: '/run/secrets/mongo_backup_password',
    });
    for (const source of ['mongo_admin_password', 'archive_db_password', 'mongo_backup_password'])
      assert.ok(secretOf(init, source), `mongo-init gets ${source}`);

    for (const name of ['app1', 'app2']) {
      const app = service(name);
      assert.equal(app.secrets?.length, 1, `${name} gets one secret`);
      // The image's user "node" (uid 1000) reads it, nobody else.
      assert.deepEqual(secretOf(app, 'archive_db_password'), {
        source: 'archive_db_password',
        uid: '1000',
        gid: '1000',
        mode: 0o400,
      });
      assert.equal(app.environment?.MONGODB_PASSWORD_FILE, '/run/secrets/archive_db_password');
      // Said outright, so an instance that lost its MONGODB_URI refuses to start instead of starting empty.
      assert.equal(app.environment?.STORE, 'mongodb', `${name} runs on MongoDB, said outright`);
      // The entrypoint adds the password: the URI names the user only.
      assert.equal(
        app.environment?.MONGODB_URI,
        'mongodb://archive@mongo1:27017,mongo2:27017,mongo3:27017/archive?replicaSet=rs0',
      );
    }
  });

  it('has a backup service with the backup password, started only by "run"', () => {
    const tools = service('mongo-tools');
    // Not in "production": "up" never starts it, and it depends on nothing, so a restore can run
    // while the instances are stopped or were never started.
    assert.deepEqual(tools.profiles, ['tools']);
    assert.equal(tools.depends_on, undefined);
    assert.deepEqual(tools.entrypoint, ['sh', '/deploy/backup.sh']);
    assert.ok(tools.volumes?.includes('./deploy/mongo/backup.sh:/deploy/backup.sh:ro'));
    assert.ok(secretOf(tools, 'mongo_backup_password'));
    assert.equal(tools.environment?.MONGO_BACKUP_PASSWORD_FILE, '/run/secrets/mongo_backup_password');
    assert.equal(secretOf(tools, 'mongo_admin_password'), undefined);
  });

  it('starts new installations on MongoDB 8.0', () => {
    const { services } = loadCompose('docker-compose.yml');
    const mongo = Object.entries(services).filter(([, s]) => s.image?.startsWith('mongo:'));
    assert.deepEqual(mongo.map(([name]) => name).sort(), [
      'mongo',
      'mongo-init',
      'mongo-keyfile',
      'mongo-tools',
      'mongo1',
      'mongo2',
      'mongo3',
    ]);
    for (const [name, s] of mongo) assert.equal(s.image, 'mongo:8.0', name);
  });

  it('limits the memory of the members, the instances and nginx', () => {
    for (const name of ['mongo1', 'mongo2', 'mongo3']) assert.equal(service(name).mem_limit, '2g', name);
    assert.equal(service('mongo1', { MONGO_MEMORY_LIMIT: '6g' }).mem_limit, '6g');
    for (const name of ['app1', 'app2']) assert.equal(service(name).mem_limit, '512m', name);
    assert.equal(service('nginx').mem_limit, '256m');
  });

  it('reads scans (OCR) in the fingerprints worker, within its own memory limit, never in the 512 MB instances', () => {
    for (const name of ['app1', 'app2']) {
      const env = service(name).environment ?? {};
      assert.deepEqual(
        [env.NEAR_DUPLICATE_POLL_SECONDS, env.OCR],
        ['0', 'off'],
        `${name} neither fingerprints nor reads`,
      );
    }
    const worker = service('fingerprints');
    assert.deepEqual(worker.command?.slice(-3), ['dist/server/cli/archive.js', 'near-duplicates', 'work']);
    assert.equal(worker.environment?.OCR, 'on');
    assert.equal(worker.environment?.STORE, 'mongodb');
    assert.equal(worker.environment?.MONGODB_URI, service('app1').environment?.MONGODB_URI);
    assert.deepEqual(secretOf(worker, 'archive_db_password'), secretOf(service('app1'), 'archive_db_password'));
    assert.equal(worker.secrets?.length, 1);
    // The worker and its reading process at their peaks (README, Limits and figures: 100-140 MB and
    // 0.8 GB measured, 1.0 GB at larger pages) fit, and the reading process's heap limit is well inside.
    const limit = Number(/^(\d+)m$/.exec(worker.mem_limit ?? '')?.[1]);
    assert.ok(limit >= 1400, `mem_limit ${worker.mem_limit}`);
    assert.ok(Number(worker.environment?.TEXT_READER_HEAP_MB) <= limit / 2);
    assert.equal(service('fingerprints', { TEXT_READER_MEMORY_LIMIT: '3g' }).mem_limit, '3g');
  });

  it('runs each instance with the flags of npm run serve, its heap limit well inside the container’s', () => {
    const serve = (JSON.parse(readRepoFile('package.json')) as { scripts: { serve: string } }).scripts.serve;
    const cmd = /^CMD (\[.*\])$/m.exec(readRepoFile('Dockerfile'));
    assert.ok(cmd, 'the Dockerfile has a CMD in exec form');
    // What the script sets before the command (MALLOC_ARENA_MAX=2) the image sets with ENV.
    const words = serve.split(/\s+/);
    const settings = words.filter((word) => /^[A-Z_]+=/.test(word));
    const command = words.filter((word) => !settings.includes(word));
    assert.deepEqual(JSON.parse(cmd[1]!), command, 'the image and npm run serve start the server alike');
    for (const setting of settings)
      assert.match(readRepoFile('Dockerfile'), new RegExp(`^ENV ${setting}$`, 'm'), `the image sets ${setting}`);
    // V8 sizes its collections from this limit: left at its default (a quarter of the host's memory),
    // the old generation grows to four times what is live before it is collected.
    const heap = /--max-old-space-size=(\d+)/.exec(serve);
    assert.ok(heap, 'a heap limit is set');
    const container = Number(/^(\d+)m$/.exec(service('app1').mem_limit ?? '')?.[1]);
    assert.ok(Number(heap[1]) <= 0.75 * container, `heap limit ${heap[1]} MB, container ${container} MB`);
    // Uploads collect V8's young generation as they receive (server/threads/young-collections.ts).
    assert.ok(words.includes('--expose-gc'), 'the collector is exposed');
  });

  it('sets no CPU limit unless asked, so the instances start on a one-CPU host', () => {
    // Docker refuses a "cpus" above the host's CPU count; 0 is no limit.
    for (const name of ['app1', 'app2']) {
      assert.equal(Number(service(name).cpus), 0, name);
      assert.equal(Number(service(name, { ARCHIVE_APP_CPUS: '2' }).cpus), 2, name);
    }
  });

  it('checks the members often while they start and seldom after', () => {
    for (const name of ['mongo1', 'mongo2', 'mongo3']) {
      const check = service(name).healthcheck;
      assert.ok(check, name);
      assert.ok(seconds(check.start_interval) <= 5, `${name} start_interval`);
      assert.ok(seconds(check.interval) >= 30, `${name} interval`);
      assert.ok(seconds(check.start_period) >= 30, `${name} start_period`);
    }
  });

  it('serves HTTPS by default and plain HTTP only with the site for an outer TLS proxy', () => {
    const nginx = service('nginx');
    assert.ok(nginx.ports?.includes('443:443'), 'HTTPS published');
    const site = (env: Record<string, string>) => {
      const mount = service('nginx', env).volumes?.find(
        (v) => typeof v === 'object' && v.target === '/etc/nginx/templates/default.conf.template',
      );
      assert.ok(mount && typeof mount === 'object', 'the site template');
      // A mistyped site name stops "up" instead of starting nginx without a site.
      assert.equal(mount.bind?.create_host_path, false);
      return mount.source;
    };
    assert.equal(site({}), './deploy/nginx/site-https.conf');
    assert.equal(site({ ARCHIVE_NGINX_SITE: 'http-behind-proxy' }), './deploy/nginx/site-http-behind-proxy.conf');
    for (const file of [site({}), site({ ARCHIVE_NGINX_SITE: 'http-behind-proxy' })])
      assert.ok(fs.existsSync(ROOT + file), file);

    // The certificate directory from .env, mounted where the site reads it.
    assert.ok(nginx.volumes?.includes('./deploy/nginx/certs:/etc/nginx/tls:ro'));
    assert.ok(
      service('nginx', { ARCHIVE_TLS_DIR: '/etc/letsencrypt' }).volumes?.includes('/etc/letsencrypt:/etc/nginx/tls:ro'),
    );
    assert.equal(nginx.environment?.ARCHIVE_TLS_CERTIFICATE, 'fullchain.pem');
    assert.equal(nginx.environment?.ARCHIVE_TLS_KEY, 'privkey.pem');
  });

  it('counts the proxies in front of the instances: nginx, and an outer one when configured', () => {
    for (const name of ['app1', 'app2']) {
      assert.equal(String(service(name).environment?.TRUST_PROXY), '1', name);
      assert.equal(String(service(name, { ARCHIVE_PROXY_HOPS: '2' }).environment?.TRUST_PROXY), '2', name);
    }
  });

  it('documents every variable it reads in the .env template', () => {
    const template = fs.readFileSync(ROOT + 'deploy/production.env.example', 'utf8');
    const text = fs.readFileSync(ROOT + 'docker-compose.yml', 'utf8');
    const used = new Set([...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]!));
    for (const name of [...used, ...PASSWORDS])
      assert.match(template, new RegExp(`^#? ?${name}=`, 'm'), `${name} in deploy/production.env.example`);
  });
});

describe('deploy/mongo/member-tls.yml', () => {
  it('makes every member require TLS with a CA, and every client use it', () => {
    const tls = loadCompose('deploy/mongo/member-tls.yml');
    for (const name of ['mongo1', 'mongo2', 'mongo3']) {
      const command = tls.services[name]?.command ?? [];
      const value = (flag: string) => command[command.indexOf(flag) + 1];
      assert.equal(value('--tlsMode'), 'requireTLS', name);
      assert.equal(value('--tlsCAFile'), '/tls/ca.pem', name);
      assert.equal(value('--tlsCertificateKeyFile'), `/tls/${name}.pem`, name);
      // The rest of the member's command as in docker-compose.yml.
      const base = service(name).command ?? [];
      assert.deepEqual(command.slice(0, base.length), base, name);
      assert.ok(tls.services[name]?.healthcheck?.test.includes('--tls'), `${name} healthcheck`);
    }
    for (const name of ['mongo-init', 'mongo-tools'])
      assert.equal(tls.services[name]?.environment?.MONGO_TLS_OPTIONS, 'tls=true&tlsCAFile=/tls/ca.pem', name);
    for (const name of ['app1', 'app2'])
      assert.match(
        String(tls.services[name]?.environment?.MONGODB_URI),
        /[?&]tls=true&tlsCAFile=\/tls\/ca\.pem$/,
        name,
      );
  });
});
