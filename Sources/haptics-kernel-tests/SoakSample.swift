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
    }

    var residentMegabytes: Double { Double(residentBytes) / 1_048_576 }

    static let header = "  time  unplugs  resets   plays  fds  dev-fds  slots/pad  rss MB"

    var row: String {
        String(
            format: "%5d s  %7d  %6d  %6d  %3d  %7d  %9@  %6.1f", Int(time.rounded()), unplugs, resets, plays,
            descriptors, deviceDescriptors, slotsPerPad.map(String.init).joined() as NSString, residentMegabytes)
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
///   engines and monitors open, so any growth is a leak);
/// - slots: no pad may ever hold more than one effect per player plus the mix's (a slot per prepared player);
/// - resident memory, on runs of `SoakOptions.residentJudgedFrom` s or more: the mean of the last three samples may
///   exceed the reference's highest by at most `residentAllowance` (see there);
/// - nothing the seats or the end checks report (recovery, stalls, refusals, what is left after the stop).
struct SoakVerdict {
    let options: SoakOptions
    let samples: [SoakSample]

    /// Resident growth tolerated after the warm-up. glibc's allocator keeps freed memory in its arenas and each
    /// replugged pad serves on a new thread, so RSS never settles on one value: at settled moments it moved between
    /// two levels 2 MB apart, without a trend, over a 20-minute soak (docs/reliability.md). Twice that spread is
    /// allowed; a leak of 0.5 KB per play (some 9,000 plays in 5 minutes) or 40 KB per unplug goes past it.
    static let residentAllowance = 4.0 * 1_048_576

    var reference: ArraySlice<SoakSample> { samples.drop { $0.time < options.warmUp }.prefix(3) }
    var final: ArraySlice<SoakSample> { samples.suffix(3) }
    var maximumSlots: Int { samples.flatMap(\.slotsPerPad).max() ?? 0 }

    func report(problems: [String], unplugs: Int) -> SoakReport {
        var problems = problems
        let slotBound = options.playersPerPad + 1
        if maximumSlots > slotBound {
            problems.append("a pad held \(maximumSlots) effects, more than \(slotBound) (one per player and the mix)")
        }
        if let referenceEnd = reference.last?.time, let referenceFDs = reference.map(\.descriptors).max() {
            for sample in samples where sample.time > referenceEnd && sample.descriptors > referenceFDs {
                problems.append(
                    "descriptors grew: \(sample.descriptors) at \(Int(sample.time)) s, \(referenceFDs) after the warm-up"
                )
            }
        } else {
            problems.append("no sample after the warm-up")
        }
        if options.seconds >= SoakOptions.residentJudgedFrom, let growth = residentGrowth,
            growth > Self.residentAllowance
        {
            problems.append(String(format: "resident memory grew %.1f MB after the warm-up", growth / 1_048_576))
        }
        return SoakReport(
            samples: samples, unplugs: unplugs, plays: samples.last?.plays ?? 0, problems: problems)
    }

    /// The mean of the last samples minus the reference's highest, in bytes.
    var residentGrowth: Double? {
        guard let top = reference.map(\.residentBytes).max(), !final.isEmpty else { return nil }
        return Double(final.map(\.residentBytes).reduce(0, +)) / Double(final.count) - Double(top)
    }

    /// The resident memory rule's figures, judged or (a run too short) only reported.
    var residentSummary: String? {
        guard let growth = residentGrowth, let top = reference.map(\.residentBytes).max() else { return nil }
        let judged = options.seconds >= SoakOptions.residentJudgedFrom
        return String(
            format: "rss: %.1f MB at most after the warm-up, %.1f MB over the last samples: %+.1f MB (%@)",
            Double(top) / 1_048_576, Double(top) / 1_048_576 + growth / 1_048_576, growth / 1_048_576,
            judged
                ? String(format: "at most %+.0f MB allowed", Self.residentAllowance / 1_048_576) as NSString
                : "not judged on a run this short" as NSString)
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
