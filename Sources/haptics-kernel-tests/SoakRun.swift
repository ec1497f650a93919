// The soak's loop: every tick it steps each seat (plays), unplugs a pad when one is due and plugs pads back in, and
// takes a sample when one is due. A sample waits for a settled moment (every pad plugged in, every engine recovered
// and running; no new unplug meanwhile), so every row counts the same things and rows can be compared.
import AHAP
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
    /// When every seat was first found settled for the sample being taken (`settleAndSample`).
    var seatsSettledAt: Double?
    /// A pad did not come back: the run ends early, with the problem said.
    var abandoned = false

    static let tick = 0.02
    /// How long a sample waits for a pad's node to be held by its engine alone (`settleAndSample`).
    static let probeGraceSeconds = 1.0
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
        let (samples, seatProblems, counters) = try await {
            () async throws -> ([SoakSample], [String], [SoakSeat.Counters]) in
            var run = try SoakRun(options, patterns: patterns)
            try await run.loop()
            var problems = run.problems
            for seat in run.seats { problems += await seat.stopAndCheck() }
            let counters = run.seats.map(\.counters)
            return (run.samples, problems + counters.flatMap(\.failures), counters)
        }()
        print(options.indent + Self.outcomes(counters))
        let problems = seatProblems + (await descriptorsLeft(since: baseline))
        let report = SoakVerdict(options: options, samples: samples).report(
            problems: problems, unplugs: counters.reduce(0) { $0 + $1.unplugs },
            plays: counters.reduce(0) { $0 + $1.plays })
        for line in SoakVerdict(options: options, samples: samples).memorySummary { print(options.indent + line) }
        for problem in report.problems.prefix(Self.problemsShown) { print(options.indent + "problem: " + problem) }
        if report.problems.count > Self.problemsShown {
            print(options.indent + "... and \(report.problems.count - Self.problemsShown) more")
        }
        print(options.indent + SoakVerdict.closingLine(options: options, report: report))
        flushOutput()
        return report
    }

    /// How the plays ended, over every seat.
    static func outcomes(_ counters: [SoakSeat.Counters]) -> String {
        let total = { (value: KeyPath<SoakSeat.Counters, Int>) in counters.reduce(0) { $0 + $1[keyPath: value] } }
        return "plays: \(total(\.plays)) completed, \(total(\.cancels)) cancelled, \(total(\.interrupted)) cut off by "
            + "an unplug; \(total(\.invalidations)) calls refused as invalidated (a play racing a reset)"
    }

    /// The descriptors still open that were not before the seats existed, once the monitors have closed theirs.
    static func descriptorsLeft(since baseline: [Int32: String]) async -> [String] {
        do {
            try await EngineSuite.waitForDescriptors(baseline, "after every engine stopped and every pad went")
            return []
        } catch {
            return ["\(error)"]
        }
    }

    init(_ options: SoakOptions, patterns: [SoakPattern]) throws {
        self.options = options
        seats = try (0..<options.pads).map { index in
            try SoakSeat(index: index, players: options.playersPerPad, patterns: patterns, seed: options.seed)
        }
        start = monotonicSeconds()
        random = SeededGenerator(seed: options.seed)
        nextSampleAt = start + options.sampleInterval
        nextUnplugAt = start  // set before nextGap() may run, as every stored property must be
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
            if settlingSince != nil, settleAndSample(now: now), now >= end || abandoned { return }
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

    /// Takes the sample once every seat is settled; returns whether it did. Abandons the run when a pad takes longer
    /// than the hang guard to come back.
    private mutating func settleAndSample(now: Double) -> Bool {
        guard let since = settlingSince else { return false }
        guard replugs.isEmpty, seats.allSatisfy(\.isSettled) else {
            seatsSettledAt = nil
            guard now - since > VirtualPadSuite.hangGuardSeconds else { return false }
            let away = seats.filter { !$0.isSettled }.map { "\($0.index + 1)" }
            problems.append("pads \(away.joined(separator: ", ")) did not come back within the hang guard")
            abandoned = true
            return true
        }
        // A pad's node open more than once is, for a moment, another engine's hot-plug watch reading a new node's
        // identity (an open, ioctls, a close), which a stall of the whole machine can hold open; a descriptor left
        // behind stays. The sample waits for it a while, then is taken (and judged) as it is.
        let settledAt = seatsSettledAt ?? now
        seatsSettledAt = settledAt
        let heldOnce = seats.allSatisfy { seat in
            seat.pad.map { EngineSuite.descriptors(pointingAt: $0.eventNode) == 1 } ?? true
        }
        if !heldOnce, now - settledAt < Self.probeGraceSeconds { return false }
        seatsSettledAt = nil
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
