#!/bin/sh
# mongodump / mongorestore of the whole replica set, as the user "backup" that mongo-init makes
# (roles backup and restore). Run in the one-shot service mongo-tools (docker-compose.yml), which
# has the password as a Docker secret; docs/deployment.md, Backups:
#   docker compose --profile production run --rm -T mongo-tools dump    > archive-2026-01-31.dump.gz
#   docker compose --profile production run --rm -T mongo-tools restore < archive-2026-01-31.dump.gz
#
# dump:    a point-in-time consistent dump while the archive runs: --oplog also takes the writes
#          made during the dump (a whole-deployment dump only, so the URI names no database), read
#          from a secondary to spare the primary. Gzipped archive on standard output.
# restore: into an EMPTY replica set, the instances stopped; --oplogReplay brings it to the dump's
#          single moment. The archive on standard input.
#
# MONGO_HOSTS, MONGO_REPLICA_SET: the members (default: this compose file's); MONGO_TLS_OPTIONS:
# URI options for member TLS (deploy/mongo/member-tls.yml), e.g. tls=true&tlsCAFile=/tls/ca.pem.
set -eu

hosts=${MONGO_HOSTS:-mongo1:27017,mongo2:27017,mongo3:27017}
options="replicaSet=${MONGO_REPLICA_SET:-rs0}&authSource=admin${MONGO_TLS_OPTIONS:+&$MONGO_TLS_OPTIONS}"
uri="mongodb://backup@$hosts/?$options"

password=$(cat "${MONGO_BACKUP_PASSWORD_FILE:?the backup user password file (a Docker secret)}")
# The password goes to the tool in a file (--config), not on its command line, where ps shows it.
config=$(mktemp)
trap 'rm -f "$config"' EXIT
chmod 600 "$config"
printf 'password: "%s"\n' "$password" > "$config"

case ${1:-} in
  dump) mongodump --config "$config" --uri "$uri&readPreference=secondary" --oplog --archive --gzip ;;
  restore) mongorestore --config "$config" --uri "$uri" --oplogReplay --archive --gzip ;;
  *)
    echo "usage: backup.sh dump > file.dump.gz, or backup.sh restore < file.dump.gz" >&2
    exit 2
    ;;
esac
