#!/usr/bin/env python3
"""Reads a `perf trace -T` of `DaemonBench frozen` (the benchmark, notifybusd, dbus-daemon and the
subscribers) and prints, for each thaw of the daemon subscriber's group, the time from the
benchmark's write to `cgroup.freeze` to: notifybusd's inotify read, its `Events` sendmsg,
dbus-daemon's relay of it, and the subscriber's report line. Used by Benchmarks/thaw-trace.sh.

    thaw-trace.py TRACE
"""
import re,sys
lines=open(sys.argv[1]).read().splitlines()
ev=[]
pat=re.compile(r'^\s*([\d.]+) \(\s*([\d.]*)\s*(?:ms)?\): (\S+)/(\d+) (?:\.\.\. \[continued\]: )?(\w+)\((.*)')
for l in lines:
    m=pat.match(l)
    if not m: continue
    t=float(m.group(1)); dur=float(m.group(2) or 0)
    ev.append((t+dur if 'continued' in l else t, m.group(3), int(m.group(4)), m.group(5), l))
ev.sort(key=lambda e:e[0])
rows=[]
for i,e in enumerate(ev):
    t,comm,pid,sc,l=e
    if comm=='notifybusd' and sc=='read' and 'inotify' in l and '= 16' in l:
        # preceding bench write count 1
        w=None
        for j in range(i-1,max(0,i-400),-1):
            tt,c,p,s,ll=ev[j]
            if c=='DaemonBench' and s=='write' and 'count: 1)' in ll: w=tt; break
        send=None; relay=None; done=None
        for j in range(i+1,min(len(ev),i+300)):
            tt,c,p,s,ll=ev[j]
            if tt-t>8: break
            if send is None and c=='notifybusd' and s=='sendmsg':
                m2=re.search(r'= (\d+)$',ll)
                if m2 and int(m2.group(1))>1000: send=tt
            elif send and relay is None and c=='dbus-daemon' and s=='sendmsg':
                m2=re.search(r'= (\d+)$',ll)
                if m2 and int(m2.group(1))>1000: relay=tt
            elif relay and done is None and c=='DaemonBench' and s=='write' and 'fd: 1' in ll: done=tt
        if send and w:
            rows.append((w,t,send,relay,done))
print('ms after the write of 0 to cgroup.freeze: notifybusd reads inotify, sends Events, dbus-daemon relays it, the subscriber reports')
for w,t,send,relay,done in rows:
    f=lambda x: '%.3f'%(x-w) if x else '-'
    print(f(t), f(send), f(relay), f(done))
