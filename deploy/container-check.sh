#!/usr/bin/env bash
# Builds the container image (Dockerfile) with podman and checks what it runs: its command, as its
# user, with its environment, answers /health/ready, and its HEALTHCHECK command says healthy.
#   deploy/container-check.sh [NODE_IMAGE]
# NODE_IMAGE: the base (default: the Dockerfile's). On a machine that reaches no image registry,
# give `local`: a base is made of this machine's own Node.js, npm, shell and libraries.
# Where podman cannot start containers (a sandbox without CAP_SYS_RESOURCE refuses the runtime's
# rlimits), RUN steps run with --isolation chroot and the image's command is run by chroot in a
# container's mounted file system: the same files, user and environment, without the runtime.
# Takes 3–7 minutes (npm ci inside the build); needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v podman >/dev/null || { echo "container-check: needs podman (Debian package podman)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "container-check: run as root (podman's storage and chroot)" >&2; exit 2; }
base=${1:-}
tag=localhost/rhizome-api:check
work=$(mktemp -d)
container=
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  if [ -n "$container" ]; then
    podman umount "$container" >/dev/null 2>&1 || true
    podman rm -f "$container" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
# A stop (CI's clean-up, a timeout, Ctrl-C) runs the clean-up too: the container unmounted and removed.
trap 'exit 143' TERM INT

if [ "$base" = local ]; then
  base=localhost/rhizome-node-base:check
  root="$work/base"
  mkdir -p "$root"
  # A file and, for a binary, the libraries it loads.
  copy() {
    local file lib
    for file in "$@"; do
      mkdir -p "$root$(dirname "$file")" && cp -L "$file" "$root$file"
      { ldd "$file" 2>/dev/null | grep -o '/[^ ]*' || true; } | while read -r lib; do
        mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
      done
    done
  }
  copy "$(command -v node)" /bin/dash /usr/bin/env /bin/mkdir /bin/chown /etc/ssl/certs/ca-certificates.crt
  [ -f /etc/npmrc ] && copy /etc/npmrc
  ln -s dash "$root/bin/sh"
  mkdir -p "$root/usr/lib" "$root/usr/bin" "$root/tmp" "$root/root" "$root/home/node"
  cp -a "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "$root/usr/lib/npm"
  ln -s ../lib/npm/bin/npm-cli.js "$root/usr/bin/npm"
  [ -x "$root/usr/bin/node" ] || ln -s "$(command -v node)" "$root/usr/bin/node"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\n' >"$root/etc/group"
  chown 1000:1000 "$root/home/node"
  tar -C "$root" -cf - . | podman import - "$base" >/dev/null
fi

mkdir -p "$HOME/.npm"
echo "container-check: building $tag${base:+ on $base}…"
# docker format: OCI images drop HEALTHCHECK. This machine's npm cache serves what it has.
podman build --isolation chroot --format docker ${base:+--build-arg NODE_IMAGE="$base"} \
  -v "${HOME}/.npm:/root/.npm" -t "$tag" . >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; exit 1; }

user=$(podman image inspect --format '{{.Config.User}}' "$tag")
workdir=$(podman image inspect --format '{{.Config.WorkingDir}}' "$tag")
mapfile -t env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$tag" | grep -v '^$')
mapfile -t command < <(podman image inspect --format '{{range .Config.Cmd}}{{println .}}{{end}}' "$tag" | grep -v '^$')
mapfile -t check < <(podman image inspect --format '{{range .Config.Healthcheck.Test}}{{println .}}{{end}}' "$tag" | grep -v '^$')
[ "$user" = node ] || { echo "container-check: the image runs as '$user', not node" >&2; exit 1; }
[ "${check[0]:-}" = CMD ] || { echo "container-check: no HEALTHCHECK in the image" >&2; exit 1; }

container=$(podman create "$tag")
rootfs=$(podman mount "$container")
port=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })")
uid=$(awk -F: -v u="$user" '$1 == u { print $3 ":" $4 }' "$rootfs/etc/passwd")
# The image's command as its user, in its directory, with its environment (HOST and PORT for this machine).
chroot --userspec="$uid" "$rootfs" /usr/bin/env -i "${env[@]}" HOST=127.0.0.1 PORT="$port" /usr/bin/env -C "$workdir" "${command[@]}" >"$work/run.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  if node -e "fetch('http://127.0.0.1:$port/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    chroot --userspec="$uid" "$rootfs" /usr/bin/env -i "${env[@]}" PORT="$port" "${check[@]:1}" ||
      { echo "container-check: the image's HEALTHCHECK said unhealthy" >&2; exit 1; }
    ls "$rootfs/data/admin-password" >/dev/null
    echo "container-check: $tag built; as $user its command answers /health/ready, its HEALTHCHECK says healthy, its data in /data"
    exit 0
  fi
  kill -0 "$server" 2>/dev/null || break
  sleep 1
done
echo "container-check: no answer from the image's command" >&2
tail -30 "$work/run.log" >&2
exit 1
