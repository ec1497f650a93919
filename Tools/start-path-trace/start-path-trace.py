# The instructions an ordinary start runs before its write, counted on the host: gdb runs `haptics-bench "Start
# paths"` (the probe output, no device), stops at the HIT-th call of EngineCore.startPlayer (3 unless the environment
# says: the rounds' first calls warm lazy state), single-steps the caller's thread until the probe is asked to write, and prints how many
# instructions that took, how many pages of code they came from, how often the thread crossed into another page
# (under emulation each crossing costs a cold call about 0.45 µs: docs/bench.md), and the functions in order.
#
#   swift build -c release --static-swift-stdlib --product haptics-bench
#   gdb -q -batch -x Tools/start-path-trace/start-path-trace.py .build/release/haptics-bench
#
# A clock read steps through the vDSO, whose retry loop never ends under single-stepping: its instructions are
# left out and the call is finished at full speed. START and END (environment) name other functions, by a part
# of their mangled names, to trace another path.
import collections
import os
import subprocess

import gdb

START = os.environ.get("START", "LinuxHaptics10EngineCoreC11startPlayer_10generation2at")
END = os.environ.get("END", "ProbeOutputC12LinuxHaptics05MotorD0AadEP5apply")


def address_of(part):
    names = subprocess.run(["nm", gdb.current_progspace().filename], capture_output=True, text=True).stdout
    for line in names.splitlines():
        fields = line.split()
        if len(fields) == 3 and part in fields[2]:
            return int(gdb.parse_and_eval("(long)&'%s'" % fields[2]))
    raise gdb.GdbError("no function whose name contains " + part)


def symbol(pc):
    text = gdb.execute("info symbol %d" % pc, to_string=True).strip()
    return text.split(" in section")[0].split(" + ")[0] if not text.startswith("No symbol") else "?"


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("starti 'Start paths' > /dev/null 2>&1")
start, end = address_of(START), address_of(END)
gdb.execute("break *%d" % start)
for _ in range(int(os.environ.get("HIT", "3"))):
    gdb.execute("continue")
gdb.execute("set scheduler-locking step")
vdso = gdb.execute("info proc mappings", to_string=True)
vdso_range = [(int(f[0], 16), int(f[1], 16)) for f in (l.split() for l in vdso.splitlines()) if f and f[-1] == "[vdso]"]
pcs = []
while True:
    pc = int(gdb.parse_and_eval("$pc"))
    if any(low <= pc < high for low, high in vdso_range):
        gdb.execute("finish", to_string=True)
        continue
    pcs.append(pc)
    if pc == end or len(pcs) > 100000:
        break
    gdb.execute("stepi", to_string=True)
gdb.execute("kill")

names = {pc: symbol(pc) for pc in set(pcs)}
order = [names[pcs[0]]]
for pc in pcs[1:]:
    if names[pc] != order[-1]:
        order.append(names[pc])
crossings = sum(1 for a, b in zip(pcs, pcs[1:]) if a >> 12 != b >> 12)
demangled = dict(
    zip(
        set(order),
        subprocess.run(
            ["swift", "demangle", "--simplified", "--compact"], input="\n".join(set(order)), capture_output=True,
            text=True).stdout.splitlines()))
print("%d instructions before the write (the vDSO's left out), %d pages of code, %d crossings into another page"
      % (len(pcs), len({pc >> 12 for pc in pcs}), crossings))
for name, count in collections.Counter(names[pc] for pc in pcs).most_common():
    print("  %5d  %s" % (count, demangled.get(name, name)[:150]))
print("in order:")
for name in order:
    print("  " + demangled.get(name, name)[:150])
