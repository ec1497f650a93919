// The `make bench` harness: each benchmark group is a file in this target that registers a `BenchmarkGroup`.
// Results are reported as ratios against a baseline measured in the same run, because these machines are
// noisy and absolute times under emulation or contention mean little on their own.
import Foundation

/// One measured quantity: raw samples plus the unit they are in.
struct Measurement: Sendable {
    let name: String
    let unit: String
    var samples: [Double]

    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
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
    let run: @Sendable () async throws -> [BenchmarkResult]
}

enum Clock {
    /// Nanoseconds on the monotonic clock.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
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
struct BenchMain {
    /// `haptics-bench [--kernel] [--list] [FILTER]`: the groups that need no device (or with `--kernel`, those
    /// that need a real kernel) whose names contain FILTER; `--list` prints their names instead of running them.
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        let kernel = arguments.contains("--kernel")
        // An empty filter (a shell passing "" along) selects everything, as no filter does: `contains("")` is false.
        let filter = arguments.first { !$0.hasPrefix("--") && !$0.isEmpty }
        let selected = benchmarkGroups.filter { group in
            group.needsKernel == kernel && (filter.map { group.name.contains($0) } ?? true)
        }
        if arguments.contains("--list") {
            selected.forEach { print($0.name) }
            return
        }
        guard !selected.isEmpty else {
            print("haptics-bench: no \(kernel ? "kernel" : "host") benchmark group\(filter.map { " matches '\($0)'" } ?? "") (see --list)")
            exit(1)
        }
        var failures = 0
        var measured = 0
        for group in selected {
            print("== \(group.name)")
            do {
                let results = try await group.run()
                if results.isEmpty {
                    failures += 1
                    print("  failed: measured nothing")
                }
                measured += results.count
                for result in results {
                    let m = result.measurement
                    var line = "  \(m.name): p50 \(format(m.percentile(50))) \(m.unit), p99 \(format(m.percentile(99))) \(m.unit), max \(format(m.maximum)) \(m.unit) (n=\(m.samples.count))"
                    if let baseline = result.baseline, let ratio = result.ratio {
                        line += " | \(format(ratio))x of \(baseline)"
                    }
                    if let note = result.note { line += " | \(note)" }
                    print(line)
                }
            } catch {
                failures += 1
                print("  failed: \(error)")
            }
        }
        if failures > 0 { exit(1) }
    }
}
