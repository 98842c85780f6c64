#!/bin/sh
# The archive image's entrypoint (Dockerfile): puts the secrets that *_FILE variables name into
# the environment of the command it then becomes (exec, so no shell stays between Docker's init
# and node). The passwords are thus files (Docker secrets, /run/secrets/...), not part of the
# container's configuration, where `docker inspect` would show them.
#
#   MONGODB_PASSWORD_FILE   the password of the user MONGODB_URI names (mongodb://archive@...),
#                           put into MONGODB_URI. Letters and digits only (it goes into a URI).
#
# Without it, the environment is passed on as it is (the development service, the embedded store).
set -eu

if [ -n "${MONGODB_PASSWORD_FILE:-}" ]; then
  if [ ! -r "$MONGODB_PASSWORD_FILE" ]; then
    echo "archive: cannot read $MONGODB_PASSWORD_FILE (is ARCHIVE_DB_PASSWORD set in .env?)" >&2
    exit 1
  fi
  # $(...) drops the file's final line break.
  password=$(cat "$MONGODB_PASSWORD_FILE")
  case $password in
    '' | *[!A-Za-z0-9]*)
      echo "archive: $MONGODB_PASSWORD_FILE must hold the password, letters and digits only" >&2
      exit 1
      ;;
  esac
  rest=${MONGODB_URI:-}
  rest=${rest#mongodb://}
  case ${MONGODB_URI:-} in
    mongodb://*@*) ;;
    *)
      echo "archive: with MONGODB_PASSWORD_FILE, MONGODB_URI must name its user: mongodb://<user>@<hosts>/..." >&2
      exit 1
      ;;
  esac
  user=${rest%%@*}
  case $user in
    *:*)
      echo "archive: MONGODB_URI has a password already; with MONGODB_PASSWORD_FILE it names only the user" >&2
      exit 1
      ;;
  esac
  MONGODB_URI="mongodb://$user:$password@${rest#*@}"
  export MONGODB_URI
  unset MONGODB_PASSWORD_FILE password rest user
fi

exec "$@"
