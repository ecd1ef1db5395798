#!/usr/bin/env bash
# Installs the tools the integration tests cross-check against: tshark, text2pcap, editcap and
# mergecap (Debian packages `tshark` and `wireshark-common`), tmux (the real terminal of
# examples/custom-protocol/tests/inspect_tmux.rs and inspector/tests/profile_tmux.rs) and
# chromium (headless, renders `profile --svg` in inspector/tests/profile_cli.rs). Idempotent and
# quiet; never fails the run when the package registry cannot be reached, but says so.
set -u

need=()
command -v tshark >/dev/null 2>&1 || need+=(tshark)
for tool in text2pcap editcap mergecap; do
    command -v "$tool" >/dev/null 2>&1 || { need+=(wireshark-common); break; }
done
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
    echo "install-test-deps: tshark, wireshark-common, tmux and chromium already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: apt-get not found; install ${need[*]} by hand" >&2
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
        echo "install-test-deps: not root and no sudo; install ${need[*]} by hand" >&2
        exit 0
    fi
fi

export DEBIAN_FRONTEND=noninteractive
# Answer the "should non-superusers capture packets" question up front so nothing prompts.
echo "wireshark-common wireshark-common/install-setuid boolean false" \
    | $sudo debconf-set-selections 2>/dev/null || true

install() {
    $sudo apt-get install -y -q --no-install-recommends "${need[@]}" >/tmp/install-test-deps.log 2>&1
}

# Run `apt-get update` first only when the package lists are missing or the install fails on
# stale lists.
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' -e '^auxfiles$')" ]; then
    $sudo apt-get update -q >/tmp/install-test-deps.log 2>&1 || true
fi
if ! install; then
    $sudo apt-get update -q >/tmp/install-test-deps.log 2>&1 || true
    if ! install; then
        echo "install-test-deps: could not install ${need[*]} (registry unreachable?);" \
            "the tshark and tmux tests will be skipped. Log: /tmp/install-test-deps.log" >&2
        exit 0
    fi
fi
echo "install-test-deps: installed ${need[*]}"
