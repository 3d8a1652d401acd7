#!/usr/bin/env bash
# Print the path of a Chromium or Chrome for the dashboard's browser tests,
# installing Debian's chromium with apt-get when none is on PATH.
# $CUE_CHROME, when set, is the answer. `make test` runs it and hands the
# path to the tests as CUE_CHROME.
set -euo pipefail

find_browser() {
	local name
	for name in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$name" >/dev/null 2>&1; then
			command -v "$name"
			return 0
		fi
	done
	return 1
}

if [ -n "${CUE_CHROME:-}" ]; then
	if command -v "$CUE_CHROME"; then
		exit 0
	fi
	echo "ensure-chromium: CUE_CHROME=$CUE_CHROME is not an executable; unset it or point it at a Chromium" >&2
	exit 1
fi
if find_browser; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-chromium: no chromium, chromium-browser or google-chrome on PATH, and no apt-get to install one; install Chromium and put it on PATH (or set CUE_CHROME to its path)" >&2
	exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "ensure-chromium: no browser on PATH, and installing Debian's chromium needs root: run 'apt-get install -y chromium' as root (or set CUE_CHROME to a Chromium's path)" >&2
		exit 1
	fi
fi
echo "ensure-chromium: installing Debian's chromium with apt-get" >&2
# Progress to stderr: stdout carries only the browser's path.
if ! { "${sudo[@]}" apt-get update -q && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core; } >&2; then
	echo "ensure-chromium: apt-get could not install chromium; install it by hand ('apt-get install -y chromium') or set CUE_CHROME to a Chromium's path" >&2
	exit 1
fi
if ! find_browser; then
	echo "ensure-chromium: chromium installed but not found on PATH ($PATH)" >&2
	exit 1
fi
