// Locks: what the package's one lock (`Lock`, a priority-inheriting, error-checking pthread mutex that
// ThreadSanitizer sees through) costs per uncontended `withLock` against the standard library's
// `Synchronization.Mutex`, which it replaced. The engine takes a handful of locks per call and per playback pass,
// at most a few thousand times a second, so nanoseconds per lock are what this has to show.
import LinuxInput
import Synchronization
@_spi(Internals) import LinuxSystem

let lockBenchmarks = BenchmarkGroup(name: "Locks") {
    let baseline = LockBench.perLock("Synchronization.Mutex, uncontended withLock") {
        let counter = MutexCounter()
        return { for _ in 0..<LockBench.locksPerSample { counter.value.withLock { $0 &+= 1 } } }
    }
    let ours = LockBench.perLock("Lock (pthread), uncontended withLock") {
        let counter = LockCounter()
        return { for _ in 0..<LockBench.locksPerSample { counter.value.withLock { $0 &+= 1 } } }
    }
    return [
        BenchmarkResult(measurement: baseline),
        BenchmarkResult(
            measurement: ours, baseline: baseline.name, ratio: ours.percentile(50) / baseline.percentile(50),
            note: String(format: "%+.1f ns per lock", ours.percentile(50) - baseline.percentile(50))),
    ]
}

/// The two locks behind an object each, as the package holds them (a class's stored property).
private final class MutexCounter: Sendable {
    let value = Mutex(0)
}

private final class LockCounter: Sendable {
    let value = Lock(0)
}

private enum LockBench {
    static let locksPerSample = 1_000_000
    static let samples = 30

    /// Nanoseconds per lock and unlock: `samples` samples of `locksPerSample` each, after one untimed sample.
    static func perLock(_ name: String, _ makeBody: () -> () -> Void) -> Measurement {
        let body = makeBody()
        let milliseconds = measure(name, iterations: samples, warmup: 1, body)
        return Measurement(
            name: name, unit: "ns", samples: milliseconds.samples.map { $0 * 1e6 / Double(locksPerSample) })
    }
}
