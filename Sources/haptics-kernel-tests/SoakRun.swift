// The soak's loop: every tick it steps each seat (plays), unplugs a pad when one is due and plugs pads back in, and
// takes a sample when one is due. A sample waits for a settled moment (every pad plugged in, every engine recovered
// and running; no new unplug meanwhile), so every row counts the same things and rows can be compared.
import AHAP
import Glibc
import HapticTestDevices

struct SoakRun {
    let options: SoakOptions
    let seats: [SoakSeat]
    let start: Double
    var random: SeededGenerator
    var nextUnplugAt: Double
    var replugs: [(seat: Int, at: Double)] = []
    var samples: [SoakSample] = []
    var problems: [String] = []
    var nextSampleAt: Double
    /// When the current wait for a settled moment began (nil: not waiting).
    var settlingSince: Double?

    static let tick = 0.02
    static let problemsShown = 20

    /// Runs a whole soak: the seats, the loop, the stop, and the checks after it. Prints the table as it goes and
    /// the closing line.
    static func run(_ options: SoakOptions) async throws -> SoakReport {
        let patterns = try SoakPattern.load()
        print(
            "\(options.indent)soak: \(options.pads) pads x \(options.playersPerPad) players, \(Int(options.seconds)) s, "
                + "seed \(options.seed), \(patterns.count) patterns, a sample every \(Int(options.sampleInterval)) s")
        try await EngineSuite.warmUpRuntime()
        let baseline = openDescriptors()
        print(options.indent + SoakSample.header)
        flushOutput()
        // The seats (engines, players, pads) live in this scope only: the descriptor check after it needs them gone.
        let (samples, seatProblems, unplugs) = try await { () async throws -> ([SoakSample], [String], Int) in
            var run = try SoakRun(options, patterns: patterns)
            try await run.loop()
            var problems = run.problems
            for seat in run.seats { problems += await seat.stopAndCheck() }
            return (
                run.samples, problems + run.seats.flatMap(\.counters.failures),
                run.seats.reduce(0) { $0 + $1.counters.unplugs }
            )
        }()
        var problems = seatProblems
        do { try await EngineSuite.waitForDescriptors(baseline, "after every engine stopped and every pad went") } catch
        {
            problems.append("\(error)")
        }
        let report = SoakVerdict(options: options, samples: samples).report(problems: problems, unplugs: unplugs)
        for line in SoakVerdict(options: options, samples: samples).memorySummary { print(options.indent + line) }
        for problem in report.problems.prefix(Self.problemsShown) { print(options.indent + "problem: " + problem) }
        if report.problems.count > Self.problemsShown {
            print(options.indent + "... and \(report.problems.count - Self.problemsShown) more")
        }
        print(options.indent + SoakVerdict.closingLine(options: options, report: report))
        flushOutput()
        return report
    }

    init(_ options: SoakOptions, patterns: [SoakPattern]) throws {
        self.options = options
        seats = try (0..<options.pads).map { index in
            try SoakSeat(index: index, players: options.playersPerPad, patterns: patterns, seed: options.seed)
        }
        start = monotonicSeconds()
        random = SeededGenerator(seed: options.seed)
        nextUnplugAt = start
        nextSampleAt = start + options.sampleInterval
        nextUnplugAt = start + nextGap()
    }

    private mutating func nextGap() -> Double {
        options.meanUnplugGap * Double.random(in: 0.5...1.5, using: &random)
    }

    /// How long a pad stays away: mostly a human unplugging and plugging back (0.1-2 s), sometimes a connector
    /// bouncing (10-100 ms), so the engine may see the new device before it noticed the old one was gone.
    private mutating func replugDelay() -> Double {
        Double.random(in: 0..<1, using: &random) < 0.2
            ? Double.random(in: 0.01...0.1, using: &random) : Double.random(in: 0.1...2, using: &random)
    }

    mutating func loop() async throws {
        let end = start + options.seconds
        while true {
            let now = monotonicSeconds()
            for seat in seats { seat.step(now: now, hangGuard: VirtualPadSuite.hangGuardSeconds) }
            try plugBackDue(now: now)
            if settlingSince == nil, now >= nextSampleAt || now >= end { settlingSince = now }
            if settlingSince == nil { unplugIfDue(now: now) }
            if settlingSince != nil, try settleAndSample(now: now), now >= end { return }
            try await Task.sleep(for: .milliseconds(Int(Self.tick * 1000)))
        }
    }

    private mutating func unplugIfDue(now: Double) {
        guard now >= nextUnplugAt else { return }
        nextUnplugAt = now + nextGap()
        let plugged = seats.indices.filter { seats[$0].isPlugged }
        guard let chosen = plugged.randomElement(using: &random) else { return }
        seats[chosen].unplug()
        replugs.append((chosen, now + replugDelay()))
    }

    private mutating func plugBackDue(now: Double) throws {
        for (seat, at) in replugs where at <= now { try seats[seat].replug(now: now) }
        replugs.removeAll { $0.at <= now }
    }

    /// Takes the sample once every seat is settled; returns whether it did. Fails the soak when a seat takes longer
    /// than the hang guard to come back.
    private mutating func settleAndSample(now: Double) throws -> Bool {
        guard let since = settlingSince else { return false }
        guard replugs.isEmpty, seats.allSatisfy(\.isSettled) else {
            if now - since > VirtualPadSuite.hangGuardSeconds {
                let away = seats.filter { !$0.isSettled }.map { "\($0.index + 1)" }
                throw TestFailure(
                    reason: "pads \(away.joined(separator: ", ")) did not come back within the hang guard")
            }
            return false
        }
        for seat in seats { seat.checkInvalidations() }
        problems += SoakSample.seatProblems(seats)
        let sample = SoakSample(time: now - start, seats: seats)
        samples.append(sample)
        print(options.indent + sample.row)
        flushOutput()
        settlingSince = nil
        // A sample due within half an interval of the end is the end's.
        let end = start + options.seconds
        nextSampleAt = now + options.sampleInterval
        if end - nextSampleAt < options.sampleInterval / 2 { nextSampleAt = end }
        return true
    }
}
