#!/bin/sh
# The archive command inside the image (README, Accounts), with the instance's secrets:
#   docker compose --profile production exec app1 archive user list
exec archive-entrypoint node /app/dist/server/cli/archive.js "$@"
