#!/bin/sh
# Install `docker-compose` (Debian bookworm's 1.29.2, Python) into a folder, no engine needed:
# enough for `docker-compose -f docker-compose.yml config`, which validates the file (tests/deploy).
# Usage: deploy/install-compose.sh VENV   ->   VENV/compose (unpacked) and VENV/bin/docker-compose.
# The packages come from Debian's archive through apt (`apt-get download`, unpacked with
# `dpkg -x`: nothing is installed system-wide); their Python runs on VENV's interpreter.
set -eu
venv=$(cd "$1" && pwd)
root="$venv/compose"
packages="docker-compose python3-attr python3-cached-property python3-certifi python3-chardet
python3-charset-normalizer python3-distro python3-docker python3-dockerpty python3-docopt
python3-dotenv python3-idna python3-jsonschema python3-pyrsistent python3-requests python3-six
python3-texttable python3-urllib3 python3-websocket python3-yaml"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# shellcheck disable=SC2086 # one word per package
if ! apt-get download $packages >download.log 2>&1; then
  echo "apt-get download failed; refreshing apt's package lists once" >&2
  apt-get update -qq
  apt-get download $packages
fi
rm -rf "$root"
mkdir -p "$root"
for deb in ./*.deb; do
  dpkg -x "$deb" "$root"
done

# -S: the venv's own packages stay out of the way; only Debian's tested set is imported.
cat >"$venv/bin/docker-compose" <<WRAPPER
#!/bin/sh
PYTHONPATH="$root/usr/lib/python3/dist-packages" exec "$venv/bin/python" -S "$root/usr/bin/docker-compose" "\$@"
WRAPPER
chmod +x "$venv/bin/docker-compose"
"$venv/bin/docker-compose" version
