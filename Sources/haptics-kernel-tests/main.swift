// haptics-kernel-tests [--list] [NAME-PREFIX...]
// Runs against the real kernel: as root inside the VM bench (scripts/vm-run), or on a host with /dev/uinput.
// Prints one PASS/FAIL/SKIP line per test and a last line "N passed, N failed[, N skipped]"; exits 1 on
// any failure. Skipped tests (no /dev/uinput) do not fail the run: callers decide whether that is an error.
import Glibc

let arguments = Array(CommandLine.arguments.dropFirst())
let runner = TestRunner(suites: allSuites)
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: haptics-kernel-tests [--list] [NAME-PREFIX...]")
    exit(0)
}
if arguments.contains("--list") {
    runner.names().forEach { print($0) }
    exit(0)
}
if let unknown = arguments.first(where: { $0.hasPrefix("-") }) {
    print("haptics-kernel-tests: unknown option \(unknown) (usage: haptics-kernel-tests [--list] [NAME-PREFIX...])")
    exit(2)
}
let unmatched = arguments.filter { prefix in !runner.names().contains(where: { $0.hasPrefix(prefix) }) }
if !unmatched.isEmpty {
    print("haptics-kernel-tests: no test name starts with \(unmatched.joined(separator: ", ")) (see --list)")
    exit(2)
}
// A client writing to a destroyed pad's node must see ENODEV, not die of SIGPIPE from a closed pipe.
signal(SIGPIPE, SIG_IGN)
exit(await runner.run(prefixes: arguments) ? 0 : 1)
