#!/usr/bin/python3
"""Builds the snmpsim data files of the topology tests from recorded-walk.snmprec.

recorded-walk.snmprec is a real walk of net-snmp 5.9.3 (snmprec 0.4.5, see README.md);
this script adds LLDP-MIB, CISCO-CDP-MIB and ipNetToMedia rows by hand and writes
access-sw1.snmprec and core-sw1.snmprec, sorted in numeric OID order (snmpsim needs it).
Run: /usr/bin/python3 build.py
"""
base = [l for l in open("recorded-walk.snmprec").read().splitlines() if l]

def rows(sysname, extra):
    out = []
    for l in base:
        oid, typ, val = l.split("|", 2)
        if oid == "1.3.6.1.2.1.1.5.0":
            val, typ = sysname, "4"
        out.append((oid, typ, val))
    out += extra
    out.sort(key=lambda r: tuple(int(x) for x in r[0].split(".")))
    return "".join(f"{o}|{t}|{v}\n" for o, t, v in out)

LLDP_LOC = "1.0.8802.1.1.2.1.3.7.1.3."      # lldpLocPortId.<port>
LLDP_REM = "1.0.8802.1.1.2.1.4.1.1."        # lldpRemEntry.<col>.<tm>.<port>.<idx>
LLDP_MAN = "1.0.8802.1.1.2.1.4.2.1.3."      # lldpRemManAddrIfSubtype.<tm>.<port>.<idx>.1.4.<a.b.c.d>
CDP = "1.3.6.1.4.1.9.9.23.1.2.1.1."         # cdpCacheEntry.<col>.<ifIndex>.<devIndex>
ARP = "1.3.6.1.2.1.4.22.1.2."               # ipNetToMediaPhysAddress.<ifIndex>.<a.b.c.d>

access = [
    (LLDP_LOC + "4", "4", "eth0"),
    (LLDP_REM + "4.0.4.1", "2", "4"), (LLDP_REM + "5.0.4.1", "4x", "001122334401"),
    (LLDP_REM + "6.0.4.1", "2", "5"), (LLDP_REM + "7.0.4.1", "4", "Gi1/0/24"),
    (LLDP_REM + "8.0.4.1", "4", "uplink to core"), (LLDP_REM + "9.0.4.1", "4", "core-sw1"),
    (LLDP_MAN + "0.4.1.1.4.10.0.0.1", "2", "2"),
    (CDP + "3.4.1", "2", "1"), (CDP + "4.4.1", "4x", "0a000002"), (CDP + "5.4.1", "4", "Cisco IOS Software, Version 17.3.4"),
    (CDP + "6.4.1", "4", "dist-sw2"), (CDP + "7.4.1", "4", "GigabitEthernet1/0/1"),
    (ARP + "4.10.0.0.50", "4x", "02aabbccdd50"),
    (ARP + "4.10.0.0.99", "4x", "02aabbccdd99"),
]
core = [
    (LLDP_LOC + "24", "4", "Gi1/0/24"),
    (LLDP_REM + "4.0.24.1", "2", "4"), (LLDP_REM + "5.0.24.1", "4x", "001122334402"),
    (LLDP_REM + "6.0.24.1", "2", "5"), (LLDP_REM + "7.0.24.1", "4", "eth0"),
    (LLDP_REM + "9.0.24.1", "4", "access-sw1"),
]
open("access-sw1.snmprec", "w").write(rows("access-sw1", access))
open("core-sw1.snmprec", "w").write(rows("core-sw1", core))
