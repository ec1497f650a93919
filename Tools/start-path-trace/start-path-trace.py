# The instructions an ordinary start runs before its write, counted on the host: gdb runs `haptics-bench "Start
# paths"` (the probe output, no device), stops at the HIT-th call of EngineCore.startPlayer (3 unless the environment
# says: the rounds' first calls warm lazy state), single-steps the caller's thread until the probe is asked to write, and prints how many
# instructions that took, how many pages of code they came from, how often the thread crossed into another page
# (under emulation each crossing costs a cold call about 0.45 µs: docs/bench.md), how many pages of data its
# memory operands and stack slots touched (each a TLB fill when cold, under emulation as on hardware), and the
# functions in order.
#
#   swift build -c release --static-swift-stdlib --product haptics-bench
#   gdb -q -batch -x Tools/start-path-trace/start-path-trace.py .build/release/haptics-bench
#
# A clock read steps through the vDSO, whose retry loop never ends under single-stepping: its instructions are
# left out and the call is finished at full speed. START and END (environment) name other functions, by a part
# of their mangled names, to trace another path; PAGES=1 lists each page of data with the function and the
# source line that first touched it (which object lies there) and the mapping it lies in.
import collections
import os
import re
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
# A memory operand in AT&T syntax: displacement(base,index,scale), or a RIP-relative one, whose address the
# disassembler gives after '#'.
OPERAND = re.compile(r"(?:%(fs|gs):)?(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?(?:,(%\w+)(?:,(\d))?)?\)")
STACK = ("push", "pop", "call", "ret", "leave")


def register(name):
    return int(gdb.parse_and_eval("(long)$" + name.lstrip("%")))


def data_addresses(pc):
    # The data addresses the instruction at pc reads or writes (its memory operands and its stack slot; lea only
    # computes an address and touches none; the fs segment's base is the thread's TLS block).
    asm = gdb.selected_frame().architecture().disassemble(pc)[0]["asm"]
    mnemonic = asm.split()[0] if asm.split() else ""
    addresses = []
    if mnemonic.startswith(STACK):
        addresses.append(register("rsp") - (8 if mnemonic.startswith(("push", "call")) else 0))
    if mnemonic.startswith("lea") or "nop" in asm:
        return addresses
    if "(%rip)" in asm and "#" in asm:
        addresses.append(int(asm.split("#")[1].split()[0], 16))
        return addresses
    for segment, displacement, base, index, scale in OPERAND.findall(asm):
        if base == "%rip":
            continue
        address = int(displacement, 0) if displacement else 0
        if base:
            address += register(base)
        if index:
            address += register(index) * int(scale or 1)
        if segment == "fs":
            address += int(gdb.parse_and_eval("(long)$fs_base"))
        addresses.append(address)
    return addresses


pcs = []
data = []
first_touch = {}
while True:
    pc = int(gdb.parse_and_eval("$pc"))
    if any(low <= pc < high for low, high in vdso_range):
        gdb.execute("finish", to_string=True)
        continue
    pcs.append(pc)
    if pc == end or len(pcs) > 100000:
        break
    for address in data_addresses(pc):
        data.append(address)
        first_touch.setdefault(address >> 12, (pc, address))
    gdb.execute("stepi", to_string=True)
stack_pointer = register("rsp")
mappings = [l.split() for l in gdb.execute("info proc mappings", to_string=True).splitlines() if l.strip().startswith("0x")]
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
stack_pages = {a >> 12 for a in data if abs(a - stack_pointer) < 1 << 16}
print("%d pages of data (%d of them the stack's), %d memory accesses"
      % (len({a >> 12 for a in data}), len(stack_pages), len(data)))
if os.environ.get("PAGES"):
    # Each data page with the function that first touched it and where it lies (the binary's data, the heap, the
    # stack, the thread's TLS block).
    for page, (pc, address) in sorted(first_touch.items(), key=lambda item: pcs.index(item[1][0])):
        where = "stack" if page in stack_pages else next(
            (f[-1] if len(f) > 4 else "anonymous" for f in mappings if int(f[0], 16) <= address < int(f[1], 16)), "?")
        found = re.search(r'Line (\d+) of "([^"]+)"', gdb.execute("info line *%d" % pc, to_string=True))
        line = "%s:%s" % (os.path.basename(found.group(2)), found.group(1)) if found else "no line"
        print("  page %#x (%s) first by %s (%s)" % (page << 12, where, demangled.get(names[pc], names[pc])[:90], line))
for name, count in collections.Counter(names[pc] for pc in pcs).most_common():
    print("  %5d  %s" % (count, demangled.get(name, name)[:150]))
print("in order:")
for name in order:
    print("  " + demangled.get(name, name)[:150])
