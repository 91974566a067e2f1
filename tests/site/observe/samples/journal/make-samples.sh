#!/usr/bin/env bash
# Regenerates the journal samples with the real tools (Debian 12: journalctl 252 from `systemd`,
# systemd-journal-remote from `systemd-journal-remote`): kernel-like entries are written into journal
# files by systemd-journal-remote, and every sample is what `journalctl` prints for them. The entries'
# times, boot id and messages are fixed; the cursors' seqnum ids (s=...) are random per file, so a
# rerun changes them (the tests read whatever cursors the files hold).
#   tests/site/observe/samples/journal/make-samples.sh [OUT_DIR]
set -euo pipefail
out=${1:-$(dirname "$0")}
remote=/lib/systemd/systemd-journal-remote
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
boot=4d3c2b1a00ff11ee8a9b0242ac120002
# entry REALTIME_US MONOTONIC_US MESSAGE: one entry in the export format (text fields only).
entry() {
  printf '__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=%s\n_BOOT_ID=%s\n_TRANSPORT=kernel\nPRIORITY=4\n' "$1" "$2" "$boot"
  printf 'SYSLOG_FACILITY=0\nSYSLOG_IDENTIFIER=kernel\n_HOSTNAME=tray07\nMESSAGE=%s\n\n' "$3"
}
{
  entry 1795996800000000 5000000 'Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org)'
  entry 1795996801000123 6000123 'NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.124.06'
  entry 1795996802000246 7000246 "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
  entry 1795996803000369 8000369 'mlx5_core 0000:1a:00.0 ibp26s0: Link down'
  entry 1795996804000492 9000492 'NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.'
} | "$remote" -o "$tmp/kernel.journal" - 2>/dev/null
journalctl --file="$tmp/kernel.journal" -o export > "$out/kernel_export.txt"
journalctl --file="$tmp/kernel.journal" -o json > "$out/kernel_json.txt"

# A multi-line message (the export format's binary field form) and one that is not UTF-8 (a byte
# array in JSON).
python3 - "$tmp/binary.export" "$boot" <<'PY'
import struct, sys
path, boot = sys.argv[1], sys.argv[2]
def head(t, m):
    return (f"__REALTIME_TIMESTAMP={t}\n__MONOTONIC_TIMESTAMP={m}\n_BOOT_ID={boot}\n_TRANSPORT=kernel\n"
            "_HOSTNAME=tray07\n").encode()
msg = (b"NVRM: Xid (PCI:0000:3b:00): 48, pid=2211, name=python3, An uncorrectable double bit error (DBE) "
       b"has been detected on GPU in the framebuffer at partition 3, subpartition 0.\nsecond line")
with open(path, "wb") as f:
    f.write(head(1795996810000000, 15000000) + b"MESSAGE\n" + struct.pack("<Q", len(msg)) + msg + b"\n\n")
    f.write(head(1795996811000000, 16000000) + b"MESSAGE=usb 1-3: bad \xff\xfe bytes\n\n")
PY
"$remote" -o "$tmp/binary.journal" - < "$tmp/binary.export" 2>/dev/null
journalctl --file="$tmp/binary.journal" -o export > "$out/binary_export.bin"
journalctl --file="$tmp/binary.journal" -o json > "$out/binary_json.txt"

# Rotation and vacuum: "line 0".."line 4" in an archived file, "line 5".."line 9" in the active one.
# Poll 1 reads everything; then the archived file is deleted (journalctl --vacuum-files does this)
# while the reader's cursor points at "line 2". Poll 2 asks from that cursor.
mkdir "$tmp/dir"
for half in 0 5; do
  for i in $(seq "$half" $((half + 4))); do entry $((1795996900000000 + i * 1000123)) $((20000000 + i * 1000123)) "line $i"; done |
    "$remote" -o "$tmp/dir/$([ "$half" = 0 ] && echo system@0000.journal || echo system.journal)" - 2>/dev/null
done
journalctl -D "$tmp/dir" -o export > "$out/rotation_poll1_export.txt"
cursor=$(journalctl -D "$tmp/dir" -o export | grep -a '^__CURSOR=' | sed -n 3p | cut -d= -f2-)
printf '%s\n' "$cursor" > "$out/rotation_cursor.txt"
journalctl -D "$tmp/dir" -o export --cursor="$cursor" > "$out/rotation_intact_cursor_export.txt"
rm "$tmp/dir/system@0000.journal"
journalctl -D "$tmp/dir" -o export --cursor="$cursor" > "$out/rotation_vacuumed_cursor_export.txt"
journalctl -D "$tmp/dir" -o export --after-cursor="$cursor" > "$out/rotation_vacuumed_after_cursor_export.txt"
journalctl -D "$tmp/dir" -o export --cursor="not-a-cursor" 2> "$out/bad_cursor_stderr.txt" > /dev/null || true
journalctl -D "$tmp/dir" -o export --since=@1900000000 > "$out/empty_export.txt"
echo "journal samples written to $out"
