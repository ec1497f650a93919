// The engine's one clock.

/// `CLOCK_MONOTONIC` in nanoseconds: the one clock of every haptic deadline (and of uinput's timestamps).
package enum MonotonicTime {
    package static func nanoseconds() -> UInt64 { Sys.monotonicNanoseconds() }

    /// `seconds` in nanoseconds, never before zero (a negative time or one that is not a number is 0); a time past
    /// what 64 bits of nanoseconds hold, about 584 years, or infinity, is the last one they hold. Rounded to the
    /// nearest nanosecond, so that a time made from nanoseconds gives them back.
    package static func nanoseconds(seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let nanoseconds = (seconds * 1e9).rounded()
        return nanoseconds < 0x1p64 ? UInt64(nanoseconds) : .max
    }

    /// The time `seconds` from now, in nanoseconds, held at the last one 64 bits hold.
    package static func deadline(afterSeconds seconds: Double) -> UInt64 {
        later(nanoseconds(), by: nanoseconds(seconds: seconds))
    }

    /// `time` plus `nanoseconds`, held at the last time 64 bits hold rather than overflowing.
    package static func later(_ time: UInt64, by nanoseconds: UInt64) -> UInt64 {
        let (sum, overflow) = time.addingReportingOverflow(nanoseconds)
        return overflow ? .max : sum
    }
}
