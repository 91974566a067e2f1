#!/usr/bin/env python3
"""Writes dcgmi dmon text the way DCGM 4.6's dcgmi/DeviceMonitor.cpp formats it (NVIDIA/DCGM 72fa3fe):
"#Entity" and "ID" padded to 16 columns, then per field its short name and unit left-aligned in
(width + 6) + 2 columns, widths and units from dcgmlib/src/dcgm_fields.cpp. No captured output of
these fields was found in public material, so these samples are CONSTRUCTED from the source, not
recorded; the parser reads columns by the header's positions, as DCGM's own test does."""
FIELDS = [("TMPTR", " C", 5), ("POWER", " W", 10), ("PMLMT", " W", 10), ("SMCLK", "", 5), ("SMMAX", "", 5),
          ("DVCCTR", "", 20), ("XIDER", "", 5)]

def row(first, cells):
    line = f"{first:<16}"
    for (name, unit, width), cell in zip(FIELDS, cells):
        line += f"{cell:<{width + 8}}"
    return line

def header():
    return row("#Entity", [f[0] for f in FIELDS]) + "\n" + row("ID", [f[1] for f in FIELDS]) + "\n"

rows = [
    ("GPU 0", ["41", "612.516", "1000.000", "1965", "1965", "0", "0"]),
    ("GPU 1", ["43", "598.102", "1000.000", "1965", "1965", "0", "0"]),
    ("GPU 2", ["88", "420.000", "1000.000", "1110", "1965", "104", "0"]),  # HW slowdown + HW thermal
    ("GPU 3", ["40", "N/A", "1000.000", "1965", "1965", "4", "79"]),       # power N/A, last Xid 79
]
with open("dmon_gb200_constructed.txt", "w") as f:
    f.write(header())
    for first, cells in rows:
        f.write(row(first, cells) + "\n")
# A field the host engine returned nothing for prints as blank columns (PrintMetricsRow), not N/A.
with open("dmon_blank_field_constructed.txt", "w") as f:
    f.write(header())
    f.write(row("GPU 0", ["41", "", "1000.000", "1965", "1965", "0", "0"]) + "\n")
