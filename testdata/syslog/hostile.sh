#!/bin/sh
# Writes hostile/*.txt, one raw syslog datagram per file (no trailing
# newline unless shown), the FuzzParse seeds besides logger.pcap.
set -eu
cd "$(dirname "$0")"
mkdir -p hostile
w() { printf "$2" >"hostile/$1.txt"; }
w nul            '<13>Nov 21 12:00:00 host app: before\000after'
w invalid-utf8   '<13>Nov 21 12:00:00 host app: bad \377\376 bytes'
w crlf-inside    '<13>Nov 21 12:00:00 host app: line1\r\nline2\r\n'
w ansi-colour    '<13>Nov 21 12:00:00 host app: \033[31mred\033[0m'
w no-pri         'Nov 21 12:00:00 host app: no pri'
w pri-192        '<192>Nov 21 12:00:00 host app: pri too big'
w pri-unclosed   '<13 Nov 21 12:00:00 host app: unclosed'
w empty          ''
w only-newline   '\n'
w only-pri       '<13>'
w garbage-after-pri '<13>\001\002\003 not a header'
w cisco-ios      '<189>237: *Jan  8 19:46:03.295: %%SYS-5-CONFIG_I: Configured from console by console'
w rfc3339-3164   '<30>2026-11-21T14:00:00.123+01:00 host app[1]: iso timestamp'
w feb29          '<13>Feb 29 12:00:00 host app: leap day'
w rfc5424-bom-nul '<165>1 2003-10-11T22:14:15.003Z host app 12 ID47 - \357\273\277BOM\000nul'
w rfc5424-nil    '<165>1 - - - - - -'
w rfc5424-bad    '<165>1 2003-13-45T99:99:99Z host app - - - bad time'
w xss-host       '<13>Nov 21 12:00:00 <img src=x onerror=alert(1)> app: x'
w rtl-override   '<13>Nov 21 12:00:00 host app: \342\200\256evil'
