#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Round-trip latency through a cache_memlimit cut (docs/bench/journal/memory.md,
"cache_memlimit while serving").

    tools/memlimit-latency.py PORT [LIMIT_MB]

Against a server on 127.0.0.1:PORT started with -m 1024: fills it with
900,000 values of 1,000 bytes, measures set+get round trips (one client,
one at a time), sends `cache_memlimit LIMIT_MB` (default 128) from another
connection, measures until `stats segments` seg_parked covers the cut (at
most 30 s), then measures again. Every loop is bounded.
"""
import socket
import sys
import time

port = int(sys.argv[1])
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 128


def conn():
    s=socket.create_connection(("127.0.0.1",port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,1); return s
def rt(s, req, end):
    s.sendall(req); b=b""
    while not b.endswith(end): b+=s.recv(65536)
    return b
def stat(s,arg,name):
    b=rt(s,b"stats"+arg+b"\r\n",b"END\r\n")
    for l in b.split(b"\r\n"):
        p=l.split()
        if len(p)==3 and p[1]==name.encode(): return int(p[2])
a=conn(); v=b"v"*1000
for base in range(0,900000,10000):
    a.sendall(b"".join(b"set f%d 0 0 1000 noreply\r\n%s\r\n"%(i,v) for i in range(base,base+10000)))
rt(a,b"mn\r\n",b"MN\r\n")
print("filled bytes", stat(a,b"","bytes"))
b=conn()
def phase(n):
    lat=[]
    for i in range(n):
        t=time.perf_counter(); rt(b,b"set l%d 0 0 100\r\n%s\r\n"%(i%1000,b"x"*100),b"\r\n"); rt(b,b"get f%d\r\n"%(i*7%900000),b"END\r\n"); lat.append(time.perf_counter()-t)
    lat.sort(); return lat
def show(name,lat):
    print("%s: n=%d p50=%.0fus p99=%.0fus max=%.1fms" % (name,len(lat),lat[len(lat)//2]*1e6,lat[int(len(lat)*.99)]*1e6,lat[-1]*1e3))
start_limit = stat(a, b"", "limit_maxbytes")
show("steady", phase(20000))
print(rt(a,b"cache_memlimit %d\r\n" % limit,b"\r\n")); t0=time.time()
lat=[]
# every segment of the cut parked (1 MiB segments): the cut is done
want = (start_limit - (limit << 20) + (1 << 20) - 1) >> 20
while time.time()-t0<30 and stat(a,b" segments","seg_parked") < want:
    lat+=phase(500)
print("shrink to %d MB took about %.1f s, parked %d, bytes %d" % (limit, time.time()-t0, stat(a,b" segments","seg_parked"), stat(a,b"","bytes")))
if lat:
    show("during shrink", sorted(lat))
show("after", phase(20000))
