// The `make bench` harness: each benchmark group is a file in this target that registers a `BenchmarkGroup`.
// Results are reported as ratios against a baseline measured in the same run, because these machines are
// noisy and absolute times under emulation or contention mean little on their own.
import ArgumentParser
import Foundation
import LinuxHaptics

/// One measured quantity: raw samples plus the unit they are in.
struct Measurement: Sendable {
    let name: String
    let unit: String
    var samples: [Double]

    func percentile(_ p: Double) -> Double { Self.percentile(p, ofSorted: samples.sorted()[...]) }

    /// The `p`th percentile of samples sorted in ascending order: the sample at the nearest rank; NaN for none.
    static func percentile<Sorted: RandomAccessCollection<Double>>(_ p: Double, ofSorted sorted: Sorted) -> Double
    where Sorted.Index == Int {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
        return sorted[sorted.startIndex + Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }

    var mean: Double { samples.isEmpty ? .nan : samples.reduce(0, +) / Double(samples.count) }
    var maximum: Double { samples.max() ?? .nan }
}

/// A line of the report: a measurement, optionally compared with a baseline from the same run.
struct BenchmarkResult: Sendable {
    let measurement: Measurement
    /// The name of the baseline this is compared to, and the ratio of p50s (ours / baseline).
    var baseline: String? = nil
    var ratio: Double? = nil
    var note: String? = nil
}

struct BenchmarkGroup: Sendable {
    let name: String
    /// Needs a real kernel with `/dev/uinput` (a virtual pad) and root. `scripts/bench` runs these groups with
    /// `--kernel`: directly where this host has `/dev/uinput`, otherwise inside the qemu bench.
    var needsKernel = false
    /// Runs only when a filter names it (a long run with a target of its own), never in a run of every group.
    var onlyWhenNamed = false
    let run: @Sendable () async throws -> [BenchmarkResult]
}

/// The engine's own clock (`MonotonicClock`, `CLOCK_MONOTONIC`), in the integer units the measurements use; the
/// virtual pad's and the emulators' record timestamps are on it too.
enum Clock {
    private static let monotonic = MonotonicClock()

    /// Nanoseconds.
    static func now() -> UInt64 { UInt64(monotonic.now * 1e9) }

    /// Microseconds, the unit of pad records.
    static func microseconds() -> Int64 { Int64(monotonic.now * 1e6) }
}

/// Times `body` `iterations` times after `warmup` untimed runs; samples in milliseconds.
func measure(_ name: String, iterations: Int, warmup: Int = 2, _ body: () throws -> Void) rethrows -> Measurement {
    for _ in 0..<warmup { try body() }
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = Clock.now()
        try body()
        samples.append(Double(Clock.now() - start) / 1e6)
    }
    return Measurement(name: name, unit: "ms", samples: samples)
}

func format(_ value: Double) -> String {
    value.isNaN ? "-" : String(format: value >= 100 ? "%.1f" : "%.3f", value)
}

@main
struct BenchMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haptics-bench",
        abstract: "Run the benchmarks of `make bench` and print each as a ratio to a baseline of the same run.",
        discussion: """
            Without --kernel, the groups that need no device; with it, those that need a real kernel (a virtual \
            pad, emulated controllers: /dev/uinput, /dev/uhid and root; scripts/bench runs them in the VM \
            bench). Exits 1 when a group failed or nothing was measured.
            """)

    @Flag(help: "Run the groups that need a real kernel instead of the host groups.")
    var kernel = false

    @Flag(help: "Print the selected groups' names instead of running them.")
    var list = false

    @Flag(
        help: ArgumentHelp(
            "Hold our engine up against SDL2 on the virtual pad and emulated controllers (make bench-peers).",
            discussion: "Needs /dev/uinput, /dev/uhid, root, sdl-peer on PATH (strace for the system-call figure)."))
    var peers = false

    @Flag(help: "With --peers: the short run make test does (the virtual pad, one pattern, a few triggers).")
    var smoke = false

    @Flag(
        help: ArgumentHelp(
            "With --peers: the trigger latency alone (every round of it), not the playback figures.",
            discussion: "A quick check of a change to the start path; the closing line then has the latency alone."))
    var latencyOnly = false

    @Flag(
        help: ArgumentHelp(
            "With --peers: the playback figures alone, no latency rounds.",
            discussion: "A check of a change to the planner; the closing line then has no latency ratios."))
    var playbackOnly = false

    @Flag(
        help: ArgumentHelp(
            "With --peers: one more latency path, our lowest layer's play write alone (EffectTrigger.fire).",
            discussion: "The floor of our prepared paths, against SDL's pre-uploaded run: what the process and the "
                + "kernel take, without the engine's code before the write. Not in the closing line."))
    var latencyFloor = false

    @Option(help: "With --peers: latency rounds per device (400 by default).")
    var latencyRounds: Int?

    @Option(
        name: .customLong("peer-device"),
        help: ArgumentHelp(
            "With --peers: measure on this device only (repeatable).",
            discussion: "One of \(PeerDeviceKind.allCases.map(\.rawValue).joined(separator: ", ")); "
                + "every device by default."))
    var peerDevices: [PeerDeviceKind] = []

    @Flag(
        help: ArgumentHelp(
            "With --peers: print the SVG overlays (intended, SDL, ours) too.",
            discussion: "Each between a line '--- svg NAME' and a line '--- end' (scripts/bench-peers saves them)."))
    var plots = false

    @Option(
        name: .customLong("latency-caller"),
        help: ArgumentHelp(
            "Serve our side of the latency rounds on this event node (the bench starts it: a process of its own).",
            visibility: .hidden))
    var latencyCaller: String?

    @Argument(help: "Only the groups whose names contain this text (an empty text selects every group).")
    var filter: String?

    func run() async throws {
        if let latencyCaller {
            try await PeerLatency.OursCaller.serve(
                eventNode: latencyCaller, kind: peerDevices.first ?? .virtualPad, floor: latencyFloor)
            return
        }
        if peers {
            var options = smoke ? PeerBenchOptions.smoke : PeerBenchOptions()
            options.printsPlots = plots
            options.latencyOnly = latencyOnly
            options.playbackOnly = playbackOnly && !latencyOnly
            options.latencyFloor = latencyFloor
            if let latencyRounds { options.latencyRounds = max(latencyRounds, 1) }
            if !peerDevices.isEmpty { options.devices = peerDevices }
            guard try await PeerBench.run(options) else {
                print("haptics-bench: a peer figure was not measured (see the '-' above)")
                throw ExitCode.failure
            }
            return
        }
        let filter = self.filter.flatMap { $0.isEmpty ? nil : $0 }
        let selected = benchmarkGroups.filter { group in
            group.needsKernel == kernel && (filter.map { group.name.contains($0) } ?? !group.onlyWhenNamed)
        }
        if list {
            selected.forEach { print($0.name) }
            return
        }
        guard !selected.isEmpty else {
            print(
                "haptics-bench: no \(kernel ? "kernel" : "host") benchmark group\(filter.map { " matches '\($0)'" } ?? "") (see --list)"
            )
            throw ExitCode.failure
        }
        var failures = 0
        for group in selected {
            print("== \(group.name)")
            do {
                let results = try await group.run()
                if results.isEmpty {
                    failures += 1
                    print("  failed: measured nothing")
                }
                results.forEach { print(Self.line($0)) }
            } catch {
                failures += 1
                print("  failed: \(error)")
            }
        }
        if failures > 0 { throw ExitCode.failure }
    }

    /// One result: percentiles of its samples (when it has any), its ratio to the baseline, its note.
    static func line(_ result: BenchmarkResult) -> String {
        let m = result.measurement
        var line = "  \(m.name):"
        if !m.samples.isEmpty {
            line +=
                " p50 \(format(m.percentile(50))) \(m.unit), p99 \(format(m.percentile(99))) \(m.unit), max \(format(m.maximum)) \(m.unit) (n=\(m.samples.count))"
        }
        if let baseline = result.baseline, let ratio = result.ratio {
            line += " | \(format(ratio))x of \(baseline)"
        }
        if let note = result.note { line += " | \(note)" }
        return line
    }
}

extension PeerDeviceKind: ExpressibleByArgument {}
