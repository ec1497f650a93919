// The running kernel's timer tick, which the latency rounds keep off their calls. Under emulation the guest's
// tick costs about 0.15 ms of a call it falls on (on hardware, microseconds), and a call of 40 µs meets one of the
// ticks 4 ms apart about once in a hundred: a p99 of such calls was either a call the tick hit or one it missed,
// and moved between runs with how many it hit. The kernel lays its ticks on multiples of the period on
// CLOCK_MONOTONIC, so every call, ours and SDL's alike, is made a quarter of a period past a tick.
import Foundation

enum KernelTick {
    /// The periods the kernel can be built with (`CONFIG_HZ`: 100, 250, 300 or 1000 a second), in nanoseconds.
    private static let periods: [Int64] = [100, 250, 300, 1000].map { 1_000_000_000 / $0 }

    /// The running kernel's tick in nanoseconds: the period at least two of three readings name (`reading`); nil
    /// when no two agree. One reading alone once named 3.3 ms on a guest whose tick is 4 ms, under load.
    static func period() -> Int64? { agreed((0..<3).map { _ in reading() }) }

    /// The period at least two of `readings` name; nil when no two do.
    static func agreed(_ readings: [Int64?]) -> Int64? {
        let named = readings.compactMap { $0 }
        return named.first { period in named.count { $0 == period } >= 2 }
    }

    /// How far jiffies (the `timestamp` of `/proc/schedstat`) advance over a quarter of a second, taken as the
    /// nearest period the kernel can have; nil when that file cannot be read or the count is within 10 % of none.
    static func reading() -> Int64? {
        guard let first = jiffies() else { return nil }
        let began = Clock.now()
        usleep(250_000)
        guard let last = jiffies() else { return nil }
        return period(jiffies: last - first, overNanoseconds: Double(Clock.now() - began))
    }

    /// The period the kernel can have that is nearest to `nanoseconds` over `jiffies` ticks; nil when none is
    /// within 10 % of it.
    static func period(jiffies: Int64, overNanoseconds nanoseconds: Double) -> Int64? {
        guard jiffies > 0, nanoseconds > 0 else { return nil }
        let measured = nanoseconds / Double(jiffies)
        let nearest = periods.min { abs(Double($0) - measured) < abs(Double($1) - measured) }
        guard let nearest, abs(Double(nearest) - measured) <= 0.1 * Double(nearest) else { return nil }
        return nearest
    }

    /// The first instant from `earliest` (CLOCK_MONOTONIC nanoseconds) that lies a quarter of `period` past a
    /// multiple of it. sdl-peer times SDL's calls by the same rule.
    static func callTime(notBefore earliest: Int64, period: Int64) -> Int64 {
        let phase = period / 4
        let start = earliest - phase
        let ticks = start / period + (start % period != 0 ? 1 : 0)
        return ticks * period + phase
    }

    /// Sleeps until `time` (CLOCK_MONOTONIC nanoseconds).
    static func sleep(until time: Int64) {
        var deadline = timespec(tv_sec: Int(time / 1_000_000_000), tv_nsec: Int(time % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
    }

    private static func jiffies() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/schedstat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("timestamp ") {
            return Int64(line.dropFirst("timestamp ".count))
        }
        return nil
    }
}
