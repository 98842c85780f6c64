import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadCompose, readRepoFile, ROOT } from './files.js';

const SITES = ['site-https.conf', 'site-http-behind-proxy.conf'];

/** The server blocks of an nginx file, as text. */
function serverBlocks(conf: string): string[] {
  const blocks: string[] = [];
  for (const match of conf.matchAll(/^server \{$/gm)) {
    let depth = 0;
    let end = match.index;
    for (; end < conf.length; end++) {
      if (conf[end] === '{') depth++;
      if (conf[end] === '}' && --depth === 0) break;
    }
    blocks.push(conf.slice(match.index, end + 1));
  }
  return blocks;
}

function uncommented(conf: string): string {
  return conf.replace(/#.*$/gm, '');
}

/** nginx 1.27.3 or later, where the open-source upstream takes "resolve"; NGINX_BIN or nginx on PATH. */
function modernNginx(): string | undefined {
  const bin = process.env.NGINX_BIN ?? 'nginx';
  const run = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  const version = /nginx\/(\d+)\.(\d+)\.(\d+)/.exec(run.stderr ?? '');
  if (!version) return undefined;
  const [major, minor, patch] = version.slice(1).map(Number) as [number, number, number];
  return major > 1 || minor > 27 || (minor === 27 && patch >= 3) ? bin : undefined;
}

describe('deploy/nginx', () => {
  it('looks the instances up while it runs, so it starts whatever the order after a reboot', () => {
    const conf = uncommented(readRepoFile('deploy/nginx/archive.conf'));
    assert.match(conf, /^resolver 127\.0\.0\.11 /m, "Docker's DNS");
    const upstreams = [...conf.matchAll(/^upstream (\w+) \{([^}]*)\}/gm)];
    assert.deepEqual(
      upstreams.map((u) => u[1]),
      ['archive', 'archive_tus'],
    );
    for (const [, name, body] of upstreams) {
      assert.match(body!, /^\s*zone \w+ \d+k;/m, `${name}: a shared-memory zone`);
      const servers = [...body!.matchAll(/^\s*server (\S+)(.*);/gm)];
      assert.equal(servers.length, 2, name);
      for (const [, address, parameters] of servers) assert.match(parameters!, /\bresolve\b/, `${name}: ${address}`);
    }
  });

  it('redirects plain HTTP to HTTPS and proxies only over TLS in the default site', () => {
    const [http, https, ...rest] = serverBlocks(uncommented(readRepoFile('deploy/nginx/site-https.conf')));
    assert.equal(rest.length, 0);
    assert.match(http!, /listen 80 default_server;/);
    assert.match(http!, /return 308 https:\/\/\$host\$archive_https_port\$request_uri;/);
    assert.doesNotMatch(http!, /proxy_pass|include/, 'port 80 passes nothing on');
    assert.match(https!, /listen 443 ssl default_server;/);
    assert.match(https!, /ssl_certificate\s+\/etc\/nginx\/tls\/\$\{ARCHIVE_TLS_CERTIFICATE\};/);
    assert.match(https!, /ssl_certificate_key\s+\/etc\/nginx\/tls\/\$\{ARCHIVE_TLS_KEY\};/);
    assert.match(https!, /include \/etc\/nginx\/archive\/locations\.conf;/);
  });

  it('passes on only the outer proxy\'s "https" in the site behind a TLS proxy', () => {
    const conf = uncommented(readRepoFile('deploy/nginx/site-http-behind-proxy.conf'));
    assert.match(
      conf,
      /map \$http_x_forwarded_proto \$archive_forwarded_proto \{\s*default\s+\$scheme;\s*"https"\s+"https";\s*\}/,
    );
  });

  it('defines in each site the scheme it passes on', () => {
    assert.match(
      readRepoFile('deploy/nginx/archive.conf'),
      /^proxy_set_header X-Forwarded-Proto \$archive_forwarded_proto;/m,
    );
    for (const site of SITES)
      assert.match(uncommented(readRepoFile(`deploy/nginx/${site}`)), /^map \S+ \$archive_forwarded_proto \{/m, site);
  });

  it('has every variable its templates use set in the nginx service', () => {
    const environment = loadCompose('docker-compose.yml').services.nginx?.environment ?? {};
    for (const file of ['archive.conf', ...SITES]) {
      // The image replaces only variables its environment defines; any other stays as written.
      for (const [, name] of uncommented(readRepoFile(`deploy/nginx/${file}`)).matchAll(/\$\{([A-Z_][A-Z0-9_]*)\}/g))
        assert.ok(name! in environment, `${name} (${file}) in the nginx service's environment`);
    }
  });

  // Where an nginx of 1.27.3 or later is at hand (NGINX_BIN), both sites as the image would
  // write them are checked by nginx itself, with app1 and app2 unknown to any DNS.
  it(
    'passes "nginx -t" for both sites',
    { skip: modernNginx() === undefined && 'no nginx 1.27.3+ (set NGINX_BIN)' },
    () => {
      const bin = modernNginx()!;
      const env = {
        ARCHIVE_HTTPS_PORT: '8443',
        ARCHIVE_TLS_CERTIFICATE: 'live/x/fullchain.pem',
        ARCHIVE_TLS_KEY: 'live/x/privkey.pem',
      };
      for (const site of SITES) {
        const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-nginx-'));
        try {
          for (const dir of ['conf.d', 'archive', 'tls/live/x', 'logs'])
            fs.mkdirSync(path.join(prefix, dir), { recursive: true });
          // As the image's 20-envsubst-on-templates.sh, then the paths moved into the prefix.
          const render = (file: string) =>
            readRepoFile(`deploy/nginx/${file}`)
              .replace(
                /\$\{([A-Z_][A-Z0-9_]*)\}/g,
                (whole, name: string) => (env as Record<string, string>)[name] ?? whole,
              )
              .replaceAll('/etc/nginx/tls/', `${prefix}/tls/`)
              .replaceAll('/etc/nginx/archive/', `${prefix}/archive/`)
              .replaceAll('/var/log/nginx/', `${prefix}/logs/`);
          fs.writeFileSync(path.join(prefix, 'conf.d/archive.conf'), render('archive.conf'));
          fs.writeFileSync(path.join(prefix, 'conf.d/default.conf'), render(site));
          fs.writeFileSync(path.join(prefix, 'archive/locations.conf'), render('locations.conf'));
          execFileSync(
            'openssl',
            [
              'req',
              '-x509',
              '-newkey',
              'rsa:2048',
              '-nodes',
              '-days',
              '1',
              '-subj',
              '/CN=archive.test',
              '-keyout',
              path.join(prefix, 'tls/live/x/privkey.pem'),
              '-out',
              path.join(prefix, 'tls/live/x/fullchain.pem'),
            ],
            { stdio: 'ignore' },
          );
          fs.writeFileSync(
            path.join(prefix, 'nginx.conf'),
            `error_log ${prefix}/logs/error.log;\npid ${prefix}/logs/nginx.pid;\nevents {}\n` +
              `http {\n    include ${prefix}/conf.d/*.conf;\n}\n`,
          );
          const run = spawnSync(bin, ['-t', '-p', prefix, '-c', path.join(prefix, 'nginx.conf')], { encoding: 'utf8' });
          assert.equal(run.status, 0, `${site}: ${run.stderr}`);
        } finally {
          fs.rmSync(prefix, { recursive: true, force: true });
        }
      }
    },
  );
});

// The files the tests name exist (a renamed file would otherwise pass every text check above).
it('finds the nginx files docker-compose.yml mounts', () => {
  for (const file of ['archive.conf', 'locations.conf', ...SITES])
    assert.ok(fs.existsSync(`${ROOT}deploy/nginx/${file}`), file);
});
