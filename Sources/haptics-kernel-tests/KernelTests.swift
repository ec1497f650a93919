// haptics-kernel-tests [--list] [--long] [NAME-PREFIX...]
// haptics-kernel-tests --soak SECONDS [--seed N]
// Runs against the real kernel: as root inside the VM bench (scripts/vm-run), or on a host with /dev/uinput.
// Prints one PASS/FAIL/SKIP line per test (a skip names the prerequisite it lacks: "SKIP NAME: PREREQUISITE:
// REASON") and a last line "N passed, N failed[, N skipped]"; exits 1 on any failure. Skips do not fail this
// run: scripts/kernel-tests decides which are allowed (docs/bench.md).
import ArgumentParser
import Glibc

@main
struct KernelTests: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haptics-kernel-tests",
        abstract: "Run the kernel tests: the virtual pad, devices, the engine, the app layer and emulated controllers.",
        discussion: """
            Needs a real kernel with /dev/uinput (and /dev/uhid for the emulated controllers) and root: the VM \
            bench (scripts/kernel-tests, scripts/vm-run) or such a host. Prints PASS, FAIL or SKIP per test (a \
            skip names the prerequisite it lacks: "SKIP NAME: PREREQUISITE: REASON") and last "N passed, N \
            failed[, N skipped]"; exits 1 when a test failed.
            """)

    @Flag(help: "Print the test names instead of running them.")
    var list = false

    @Flag(help: "Write a line to /dev/kmsg as each test starts, naming it (the VM bench's console check reads them).")
    var kmsgMarks = false

    @Flag(help: "Repeat the unplug-replug cycles 20 times per controller and 100 on the virtual pad, not 4 and 25.")
    var long = false

    @Argument(help: "Run only the tests whose names start with one of these prefixes (see --list).")
    var prefixes: [String] = []

    @Option(
        help: ArgumentHelp(
            "Run the load soak for this many seconds instead of the tests (docs/reliability.md, Load).",
            valueName: "seconds"))
    var soak: Double?

    @Option(help: "The soak's random seed (unplug times, patterns), to replay a run; random when omitted.")
    var seed: UInt64?

    func validate() throws {
        if let soak {
            guard soak >= 1, soak.isFinite else { throw ValidationError("--soak takes a number of seconds, 1 or more") }
            guard prefixes.isEmpty, !list, !long else {
                throw ValidationError("--soak runs alone: no test names, no --list, no --long")
            }
            return
        }
        if seed != nil { throw ValidationError("--seed is the soak's: use it with --soak") }
        let names = TestRunner(suites: allSuites).names()
        let unmatched = prefixes.filter { prefix in !names.contains { $0.hasPrefix(prefix) } }
        if !unmatched.isEmpty {
            throw ValidationError("no test name starts with \(unmatched.joined(separator: ", ")) (see --list)")
        }
    }

    func run() async throws {
        let runner = TestRunner(suites: allSuites)
        if list {
            runner.names().forEach { print($0) }
            return
        }
        // A client writing to a destroyed pad's node must see ENODEV, not die of SIGPIPE from a closed pipe.
        signal(SIGPIPE, SIG_IGN)
        if let soak {
            let options = SoakOptions(seconds: soak, seed: seed ?? SoakOptions.randomSeed())
            let report = try await SoakRun.run(options)
            if !report.problems.isEmpty { throw ExitCode.failure }
            return
        }
        if long { Repetitions.chooseLong() }
        let marks = kmsgMarks ? KernelLogMarks() : nil
        if kmsgMarks && marks == nil { print("haptics-kernel-tests: cannot write \(KernelLogMarks.path); no marks") }
        if !(await runner.run(prefixes: prefixes, marks: marks)) { throw ExitCode.failure }
    }
}
