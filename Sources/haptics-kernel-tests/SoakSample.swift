// What the soak samples at each settled moment, the table it prints, and the verdict: what "flat" means.
import Foundation
import HapticTestDevices

/// One row of the soak's table, taken with every pad plugged in and every engine recovered and running.
struct SoakSample {
    /// Seconds since the seats started.
    var time: Double
    var unplugs: Int
    var resets: Int
    var plays: Int
    /// This process's open descriptors (/proc/self/fd), and those of them open on an evdev node.
    var descriptors: Int
    var deviceDescriptors: Int
    /// Effects each pad holds, as the pad sees them (uploaded and not erased).
    var slotsPerPad: [Int]
    var residentBytes: Int
    /// Bytes allocated and not freed (every malloc arena): what the process holds, without the allocator's cache.
    var heapBytes: Int
    var threads: Int

    init(time: Double, seats: [SoakSeat]) {
        self.time = time
        let counters = seats.map(\.counters)
        unplugs = counters.reduce(0) { $0 + $1.unplugs }
        resets = counters.reduce(0) { $0 + $1.resets }
        plays = counters.reduce(0) { $0 + $1.plays }
        let open = openDescriptors()
        descriptors = open.count
        deviceDescriptors = open.values.filter { $0.hasPrefix("/dev/input/event") }.count
        slotsPerPad = seats.map { $0.pad?.uploadedEffects().count ?? 0 }
        residentBytes = ProcessResources.residentBytes() ?? 0
        heapBytes = ProcessResources.heapBytesInUse()
        threads = ProcessResources.threadCount() ?? 0
    }

    var residentMegabytes: Double { Double(residentBytes) / 1_048_576 }
    var heapMegabytes: Double { Double(heapBytes) / 1_048_576 }

    static let header = "  time  unplugs  resets   plays  fds  dev-fds  slots/pad  threads  rss MB  heap MB"

    var row: String {
        String(
            format: "%5d s  %7d  %6d  %6d  %3d  %7d  %9@  %7d  %6.1f  %7.2f", Int(time.rounded()), unplugs, resets,
            plays, descriptors, deviceDescriptors, slotsPerPad.map(String.init).joined() as NSString, threads,
            residentMegabytes, heapMegabytes)
    }

    /// What must hold at every settled moment: each engine holds exactly one descriptor on its own pad's node, and
    /// every unplug so far was reported (`gameControllerDisconnect`) and recovered from (a reset).
    static func seatProblems(_ seats: [SoakSeat]) -> [String] {
        seats.flatMap { seat -> [String] in
            var problems: [String] = []
            let counters = seat.counters
            if let pad = seat.pad {
                let open = EngineSuite.descriptors(pointingAt: pad.eventNode)
                if open != 1 { problems.append("pad \(seat.index + 1): \(open) descriptors on its node, not 1") }
            }
            if counters.disconnects != counters.unplugs || counters.resets != counters.unplugs {
                problems.append(
                    "pad \(seat.index + 1): \(counters.unplugs) unplugs, \(counters.disconnects) disconnects reported, "
                        + "\(counters.resets) resets")
            }
            return problems
        }
    }
}

/// The rules. After the warm-up (`SoakOptions.warmUp`), the first three samples are the reference:
/// - descriptors: no later sample may count more than the reference's highest (a settled moment has the same pads,
///   engines and monitors open, so one more is a leak);
/// - threads: no later sample may count more than `threadAllowance` above the reference's highest;
/// - slots: no pad may ever hold more than one effect per player plus the mix's (a slot per prepared player);
/// - memory, on runs of `SoakOptions.residentJudgedFrom` s or more: the mean of the last three samples may exceed the
///   reference's highest by at most `heapAllowance` for the heap in use and `residentAllowance` for RSS;
/// - nothing the seats or the end checks report (recovery, stalls, refusals, what is left after the stop).
struct SoakVerdict {
    let options: SoakOptions
    let samples: [SoakSample]

    /// Threads tolerated above the reference: Dispatch's worker threads come and go with the load (27 or 28 at
    /// settled moments in one run); ours (a pad's server, an engine's playback and monitor threads) are 24.
    static let threadAllowance = 4

    /// Heap growth tolerated after the warm-up: what the program holds drifts by about 0.2 MB while caches and
    /// dictionaries reach their working size. A leak of 60 bytes per play (some 9,000 plays in 5 minutes) or 5 KB
    /// per unplug (some 100) goes past it.
    static let heapAllowance = 0.5 * 1_048_576
    /// RSS growth tolerated after the warm-up. glibc's allocator keeps freed memory in its arenas and each replugged
    /// pad serves on a new thread, so RSS moves in steps of about 2 MB with the heap flat (up to 3 MB above the
    /// reference in a 5-minute run; between two levels 2 MB apart, without a trend, over 20 minutes:
    /// docs/reliability.md). The heap rule judges leaks; this one catches memory outside the heap (stacks, mappings).
    static let residentAllowance = 8.0 * 1_048_576

    var reference: ArraySlice<SoakSample> { samples.drop { $0.time < options.warmUp }.prefix(3) }
    var final: ArraySlice<SoakSample> { samples.suffix(3) }
    var maximumSlots: Int { samples.flatMap(\.slotsPerPad).max() ?? 0 }
    var judgesMemory: Bool { options.seconds >= SoakOptions.residentJudgedFrom }

    func report(problems: [String], unplugs: Int, plays: Int) -> SoakReport {
        var problems = problems
        // One per player, the mix slot and its keeper.
        let slotBound = options.playersPerPad + 2
        if maximumSlots > slotBound {
            problems.append(
                "a pad held \(maximumSlots) effects, more than \(slotBound) (one per player, the mix and its keeper)")
        }
        if reference.isEmpty { problems.append("no sample after the warm-up") }
        problems += countGrowth("descriptors", \.descriptors)
        problems += countGrowth("threads", \.threads, allowance: Self.threadAllowance)
        for (what, value, allowance) in memoryRules where judgesMemory {
            if let growth = growth(value), growth > allowance {
                problems.append(
                    String(format: "%@ grew %.2f MB after the warm-up", what as NSString, growth / 1_048_576))
            }
        }
        return SoakReport(
            samples: samples, unplugs: unplugs, plays: plays, problems: problems)
    }

    var memoryRules: [(String, KeyPath<SoakSample, Int>, Double)] {
        [
            ("the heap in use", \.heapBytes, Self.heapAllowance),
            ("resident memory", \.residentBytes, Self.residentAllowance),
        ]
    }

    /// Samples after the reference that count more than its highest (plus `allowance`).
    func countGrowth(_ what: String, _ value: KeyPath<SoakSample, Int>, allowance: Int = 0) -> [String] {
        guard let end = reference.last?.time, let top = reference.map({ $0[keyPath: value] }).max() else { return [] }
        return samples.filter { $0.time > end && $0[keyPath: value] > top + allowance }.map { sample in
            "\(what) grew: \(sample[keyPath: value]) at \(Int(sample.time)) s, \(top) after the warm-up"
        }
    }

    /// The mean of the last samples minus the reference's highest, in bytes.
    func growth(_ value: KeyPath<SoakSample, Int>) -> Double? {
        guard let top = reference.map({ $0[keyPath: value] }).max(), !final.isEmpty else { return nil }
        return Double(final.map { $0[keyPath: value] }.reduce(0, +)) / Double(final.count) - Double(top)
    }

    /// The memory rules' figures, judged or (a run too short) only reported.
    var memorySummary: [String] {
        memoryRules.compactMap { what, value, allowance in
            guard let growth = growth(value), let top = reference.map({ $0[keyPath: value] }).max() else { return nil }
            let megabytes = { (bytes: Double) in bytes / 1_048_576 }
            let verdict = judgesMemory ? String(format: "at most %+.1f MB allowed", megabytes(allowance)) : "not judged"
            return String(
                format: "%@: %.2f MB at most after the warm-up, %.2f MB over the last samples: %+.2f MB (%@)",
                what as NSString, megabytes(Double(top)), megabytes(Double(top) + growth), megabytes(growth),
                verdict as NSString)
        }
    }

    static func closingLine(options: SoakOptions, report: SoakReport) -> String {
        let verdict = SoakVerdict(options: options, samples: report.samples)
        let first = report.samples.first
        let last = report.samples.last
        let line = String(
            format: "soak: pads=%d players=%d seconds=%d unplugs=%d plays=%d fds=%d..%d slots=%d rss=%.1f..%.1f MB",
            options.pads, options.pads * options.playersPerPad, Int(options.seconds), report.unplugs, report.plays,
            first?.descriptors ?? 0, last?.descriptors ?? 0, verdict.maximumSlots, first?.residentMegabytes ?? 0,
            last?.residentMegabytes ?? 0)
        let outcome = report.problems.isEmpty ? "flat" : "NOT flat (\(report.problems.count) problems)"
        return line + ": \(outcome) (seed \(options.seed))"
    }
}
