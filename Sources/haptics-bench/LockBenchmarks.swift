// Locks: what the package's one lock (`Lock`, a priority-inheriting, error-checking pthread mutex that
// ThreadSanitizer sees through) costs per uncontended `withLock` against the standard library's
// `Synchronization.Mutex`, which it replaced. The engine takes a handful of locks per call and per playback pass,
// at most a few thousand times a second, so nanoseconds per lock are what this has to show.
import Glibc
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
    ] + (try GateWait.results())
}

/// `CallGate.shut()` waiting 300 ms for a call in flight (an upload to a slow uinput server, say): the processor
/// time of the waiting thread against the wait's wall time. It yields for its first thousand looks, then sleeps a
/// millisecond between looks; a wait that only yielded took as much processor time as wall time.
private enum GateWait {
    final class Owner: Sendable { let gate = CallGate() }

    /// The calling thread's processor time so far.
    static func threadProcessorMilliseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1e6
    }

    static func results() throws -> [BenchmarkResult] {
        var wall: [Double] = []
        var processor: [Double] = []
        for _ in 0..<5 {
            let owner = Owner()
            let inside = Lock(false)
            let caller = try ServiceThread.start {
                _ = owner.gate.pass {
                    inside.withLock { $0 = true }
                    Sys.sleep(nanoseconds: 300_000_000)
                }
            }
            while !inside.withLock({ $0 }) { Sys.yield() }
            let spent = Lock((processor: 0.0, wall: 0.0))
            let closer = try ServiceThread.start {
                let cpu = threadProcessorMilliseconds()
                let start = Sys.monotonicNanoseconds()
                owner.gate.shut()
                spent.withLock {
                    $0 = (threadProcessorMilliseconds() - cpu, Double(Sys.monotonicNanoseconds() - start) / 1e6)
                }
            }
            closer.join()
            caller.join()
            let (used, took) = spent.withLock { $0 }
            processor.append(used)
            wall.append(took)
        }
        let waited = Measurement(name: "CallGate.shut waiting for a 300 ms call: wall time", unit: "ms", samples: wall)
        let used = Measurement(
            name: "CallGate.shut waiting for a 300 ms call: the waiting thread's processor time", unit: "ms",
            samples: processor)
        return [
            BenchmarkResult(measurement: waited),
            BenchmarkResult(
                measurement: used, baseline: waited.name, ratio: used.percentile(50) / waited.percentile(50),
                note: "a wait that only yields takes about 1.0x"),
        ]
    }
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
