/// The instants at which a device puts the frames it is sent on the wire, where the device's driver paces them
/// itself: hid-nintendo sends one rumble frame per pair of the pad's input reports, each carrying the oldest
/// call queued. A level planned for the hold of one frame, and written so that it is that frame's, is played
/// for exactly that hold; written between two instants by chance it lands in either neighbouring frame.
///
/// `origin` is any one instant of the grid, on the timeline's time axis; the others are whole periods from it.
public struct FrameGrid: Sendable, Hashable {
    /// One instant of the grid, in seconds.
    public var origin: Double
    /// The seconds between two frames.
    public var period: Double

    /// A grid through `origin` every `period` seconds; nil unless the period is positive and both are finite.
    public init?(origin: Double, period: Double) {
        guard origin.isFinite, period.isFinite, period > 0 else { return nil }
        self.origin = origin
        self.period = period
    }

    /// The first instant of the grid at or after `time` (an instant a microsecond before `time` counts as at it,
    /// so that a time computed as an instant is not moved a whole period on).
    public func instant(atOrAfter time: Double) -> Double {
        let periods = ((time - origin) / period - Self.tolerance / period).rounded(.up)
        return origin + periods * period
    }

    /// Times this close count as the same instant.
    package static let tolerance = 1e-6
}

/// The frames of hid-nintendo, followed from the arrival times of the pad's input reports and from the calls made
/// to its play function, by running its rumble worker's rules on them (`Rules`). Those of Debian 12's kernel, 6.1:
/// - a call queues a frame, and starts the worker unless it runs; a call that moves the motors sets the count of
///   frames the driver resends by itself afterwards to five;
/// - the worker sends a frame at once when its last send is 25 ms old or more, else on the first input report that
///   is; it first sends the frame it sent last, then each queued frame in turn, and stops when none is left;
/// - on an input report 50 ms or more after its last send, with frames queued or resends counted, the driver starts
///   the worker (one resend fewer).
/// At the pad's 15 ms a busy worker sends every other report and the resends come every fourth: the frames keep
/// one parity of the reports, the grid's. A call made from rest at `callLead` before a grid instant less a frame
/// is sent at once (the frame sent last, again), and its own frame goes on the first report 25 ms later: that
/// grid instant, as for a call made while the worker is busy. The grid is therefore every other report, on the
/// parity of the driver's last send on a report (any parity before the first). Thresholds are the driver's in
/// milliseconds of the kernel's 4 ms tick; at 15 ms no report falls where the tick could decide either way.
/// From Linux 6.4 every send waits for a report after the worker starts or last sent (`Rules.waitsForReport`):
/// started by a call or by a report, the worker sends on a later report, 20 ms or more after its last send over
/// USB, and the frame leaves a tick-rounded 4 ms after that report (`Rules.sendDelay`). The driver starts it on
/// every report 50 ms after the last frame left while frames are queued or resends counted, running or not: one
/// started again while it runs sends once more after its queue, so each resend the driver starts is two frames,
/// on the report after the one that started it and 30 ms later.
/// Pure: fed the reports and the calls in any interleaving (each is placed by its time), it answers the grid.
public struct FramePacing: Sendable {
    /// How the driver's worker paces its sends: the rules of one range of kernel versions.
    public struct Rules: Sendable, Hashable {
        /// Whether every send waits for an input report after the worker starts or last sent, even from rest
        /// (Linux 6.4 on); before, a send from rest went out at once.
        public var waitsForReport: Bool
        /// The least time from one send to the next, as the driver counts it.
        public var spacing: Double
        /// How long after the report that decides it a frame leaves: the grid's instants are when frames leave.
        public var sendDelay: Double

        public init(waitsForReport: Bool, spacing: Double, sendDelay: Double) {
            self.waitsForReport = waitsForReport
            self.spacing = spacing
            self.sendDelay = sendDelay.isFinite ? Swift.max(sendDelay, 0) : 0
        }

        /// Debian 12's 6.1 and the kernels before 6.4.
        public static let linux61 = Rules(waitsForReport: false, spacing: 0.025, sendDelay: 0)

        /// The rules of a kernel that is 6.4 or later or not, with its tick of `tick` seconds, for a pad on USB or
        /// not; nil where the frames are not followed: from 6.4 on over Bluetooth, where the driver spaces its
        /// sends 60 ms apart. From 6.4 the driver also sleeps 4 ms after the report that decides a send, to keep
        /// its output off the pad's next input (`msleep`, which counts whole ticks and one more, so the send comes
        /// between one tick less and that many after): the frame leaves the middle of that wait after the report,
        /// 6 ms at Debian's 250 Hz tick.
        public static func forKernel(from64 isLinux64: Bool, tick: Double?, overUSB: Bool) -> Rules? {
            guard isLinux64 else { return .linux61 }
            guard overUSB else { return nil }
            let tick = tick.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? 0.004
            let ticks = (transmitOffset / tick - 1e-9).rounded(.up) + 1
            return Rules(waitsForReport: true, spacing: 0.020, sendDelay: (ticks - 0.5) * tick)
        }

        /// hid-nintendo's sleep between the report that decides a send and the send, from Linux 6.4.
        static let transmitOffset = 0.004
    }

    /// The report periods whose frames this follows: the 25 ms spacing (20 from 6.4) falls between one report and
    /// two, the 50 ms period between three and four, however the kernel's tick rounds them. The Pro Controller over
    /// USB and Joy-Cons report every 15 ms; a Pro Controller over Bluetooth every 8 or 11 ms: outside.
    public static let reportPeriods: ClosedRange<Double> = 0.014...0.0165
    /// How long before a frame instant a call for the frame after it is made: half a report, so that a late call
    /// or an early report leaves either side the same margin.
    public static let callLead = 0.0075
    static let resendPeriod = 0.050
    static let resends = 5
    /// Calls kept for reports to come.
    static let callsKept = 64
    /// The reports the period is drawn from, and the fewest periods between two for their slope to count.
    static let reportsKept = 24
    /// The latest reports the phase of those to come is drawn from (`onTimeReport`).
    static let phaseReports = 5
    /// Counting reports, the share of a period by which a report may come before where `onTimeReport` puts it
    /// and still count as the next (that estimate can be a little late): a report up to 80% of a period late (12 ms
    /// of 15) then counts as the one due, not the one after it.
    static let earlySlack = 0.2
    static let slopeSpan = 4
    /// Reports closer than this are one (the driver passes each report's three IMU samples one after another).
    static let sameReport = 0.002

    /// The driver's worker as the rules run it.
    struct Worker: Sendable {
        let rules: Rules
        var queued = 0
        var running = false
        /// Where the worker waits for a report (`Rules.waitsForReport`): only a later one decides its send.
        var waitingFrom: Double?
        /// The last send, where the driver counts the spacing from (the report that decided it, or the call).
        var lastSend: Double?
        /// The last send made on a report: the parity of the frames.
        var lastSendOnReport: Double?
        var resendsLeft = 0
        /// Started again while it runs (`Rules.waitsForReport`): one more send once its queue is empty.
        var startedAgain = false

        init(rules: Rules) { self.rules = rules }

        mutating func call(at time: Double, moves: Bool) {
            queued += 1
            if moves { resendsLeft = FramePacing.resends }
            guard !running else { return }
            running = true
            if rules.waitsForReport {
                waitingFrom = time
            } else if lastSend.map({ time - $0 >= rules.spacing }) ?? true {
                send(at: time, onReport: false)
            }
        }

        mutating func report(at time: Double) {
            // The 50 ms are counted from when the frame left (before any, from long ago).
            let resend =
                lastSend.map { time - ($0 + rules.sendDelay) >= FramePacing.resendPeriod } ?? true
                && (queued > 0 || resendsLeft > 0)
            if rules.waitsForReport {
                // The driver starts the worker on every such report, running or not; a worker waiting then takes
                // this report, one started by it the next, and one started again while it ran sends once more.
                if resend {
                    resendsLeft = Swift.max(resendsLeft - 1, 0)
                    if running {
                        startedAgain = true
                    } else {
                        running = true
                        waitingFrom = time
                        return
                    }
                }
            } else if !running, resend {
                resendsLeft = Swift.max(resendsLeft - 1, 0)
                running = true
                send(at: time, onReport: true)
                return
            }
            guard running, waitingFrom.map({ time > $0 }) ?? true,
                lastSend.map({ time - $0 >= rules.spacing }) ?? true
            else { return }
            send(at: time, onReport: true)
        }

        private mutating func send(at time: Double, onReport: Bool) {
            lastSend = time
            if onReport { lastSendOnReport = time }
            if rules.waitsForReport { waitingFrom = time }
            if queued > 0 {
                queued -= 1
            } else if startedAgain {
                startedAgain = false
            } else {
                running = false
            }
        }
    }

    /// The rules this runs.
    public let rules: Rules

    private var worker: Worker
    /// Calls not yet run: made after the last report read.
    private var calls: [(time: Double, moves: Bool)] = []
    /// The last report's arrival, in seconds.
    public private(set) var lastReport: Double?
    /// The reports' period (`report(at:)`).
    public private(set) var reportPeriod: Double?
    /// Where the last report would have arrived on time: the earliest instant the latest `phaseReports` put it at,
    /// each carried over the periods since on `reportPeriod`. Reports only ever come late (the host reads them
    /// late, never early), so one late report moves this by nothing, and the reports to come are taken from here.
    public private(set) var onTimeReport: Double?
    /// The recent reports read, numbered by their periods.
    private var recent: [(time: Double, number: Int)] = []

    /// A model of the driver that follows `rules`.
    public init(rules: Rules = .linux61) {
        self.rules = rules
        worker = Worker(rules: rules)
    }

    /// Takes a report that arrived at `time` (in order; one that repeats the last within `sameReport` is that one).
    /// The period is the median slope between the recent reports read, each numbered by the periods since the one
    /// before (reports not read counted in): late reports and a jump in their phase (an emulated pad late by more
    /// than a period starts again from then) move it by little. The grid is drawn from the last report as it would
    /// have come on time (`onTimeReport`), so the period only carries it over the few frames planned ahead.
    public mutating func report(at time: Double) {
        guard time.isFinite else { return }
        guard let last = lastReport else {
            lastReport = time
            onTimeReport = time
            recent = [(time, 0)]
            run(until: time)
            return
        }
        let interval = time - last
        guard interval > Self.sameReport else { return }
        // Before the reports give a period, the middle of the periods followed: not the first interval, which a
        // first report read late (or one report counted twice) would make a fraction of a period, and every report
        // after it would then be numbered by that fraction.
        let guess = reportPeriod ?? (Self.reportPeriods.lowerBound + Self.reportPeriods.upperBound) / 2
        // Counted from where the last report would have come on time: reports only come late, so one up to most
        // of a period late is still the next, not the one after it.
        let expected = onTimeReport.map { time - $0 } ?? interval
        let periodsSince = (expected / guess + Self.earlySlack).rounded(.down)
        guard periodsSince <= Double(Self.longestGap) else {
            restart(at: time, afterReportsEvery: guess)
            return
        }
        let periods = Swift.max(1, Int(periodsSince))
        // Reports not read (the node's queue keeps only the newest) are run as if they came on time.
        for index in stride(from: periods - 1, to: 0, by: -1) {
            run(until: time - Double(index) * interval / Double(periods))
        }
        recent.append((time, (recent.last?.number ?? 0) + periods))
        if recent.count > Self.reportsKept { recent.removeFirst() }
        reportPeriod = Self.medianSlope(recent) ?? guess
        lastReport = time
        onTimeReport = Self.earliest(recent.suffix(Self.phaseReports), period: reportPeriod ?? guess)
        run(until: time)
    }

    /// The most periods between two reports read that are counted and run one by one: 150 s at 15 ms, far longer
    /// than a pad that reports keeps still. After a longer gap (a pad that stopped and started again, or a time
    /// passed far beyond the last: 1e9 s on meant billions of reports to run, and 1e300 trapped counting them as an
    /// `Int`) the reports start again from the next, as from the first.
    static let longestGap = 10_000
    /// The reports not read that are run before the one after a gap: enough for the worker to send every call
    /// it could hold and its resends, each resend two frames.
    static let reportsRunAfterAGap = 2 * (callsKept + resends)

    /// Takes the report at `time` after a gap longer than `longestGap` periods of `period`: the last
    /// `reportsRunAfterAGap` reports before it are run as if they came on time (the calls made before them first),
    /// then this one, which the period and the phase are counted from again, as from the first report.
    private mutating func restart(at time: Double, afterReportsEvery period: Double) {
        for index in stride(from: Self.reportsRunAfterAGap, to: 0, by: -1) {
            run(until: time - Double(index) * period)
        }
        lastReport = time
        onTimeReport = time
        recent = [(time, 0)]
        run(until: time)
    }

    /// The earliest instant `reports` put the last of them at, each carried to its number over `period`.
    static func earliest(_ reports: ArraySlice<(time: Double, number: Int)>, period: Double) -> Double? {
        guard let last = reports.last else { return nil }
        return reports.map { $0.time + Double(last.number - $0.number) * period }.min()
    }

    /// The median of the slopes between reports at least `slopeSpan` periods apart; nil without such a pair.
    static func medianSlope(_ reports: [(time: Double, number: Int)]) -> Double? {
        var slopes: [Double] = []
        for later in reports.indices {
            for earlier in reports.indices[..<later] {
                let periods = reports[later].number - reports[earlier].number
                guard periods >= slopeSpan else { continue }
                slopes.append((reports[later].time - reports[earlier].time) / Double(periods))
            }
        }
        guard !slopes.isEmpty else { return nil }
        slopes.sort()
        return slopes[slopes.count / 2]
    }

    /// Runs the calls made before a report at `time`, then the report.
    private mutating func run(until time: Double) {
        while let call = calls.first, call.time < time {
            worker.call(at: call.time, moves: call.moves)
            calls.removeFirst()
        }
        worker.report(at: time)
    }

    /// Takes a call to the driver made at `time`; `moves`: its levels are not at rest.
    public mutating func called(at time: Double, moves: Bool) {
        let index = calls.firstIndex { $0.time > time } ?? calls.endIndex
        calls.insert((time, moves), at: index)
        // A pad that stopped reporting runs no call: the newest are kept.
        if calls.count > Self.callsKept { calls.removeFirst(calls.count - Self.callsKept) }
    }

    /// The first instant from `time` on that lies `callLead` after a report (the reports to come taken on time):
    /// where a call from rest leaves no doubt which report 25 ms after its send is the first, however late the
    /// driver's worker runs it (up to a few milliseconds) or the kernel's tick rounds it. Nil before the reports
    /// give a period.
    public func callInstant(from time: Double) -> Double? {
        guard let last = onTimeReport, let period = reportPeriod else { return nil }
        let first = last + Self.callLead
        return time <= first ? first : first + ((time - first) / period).rounded(.up) * period
    }

    /// The frames' grid for calls made from `time` on, once the reports gave a period in `reportPeriods`: every
    /// other report, on the parity of the driver's last send by then (the reports to come taken on time, the
    /// calls made so far run); any parity before its first. Nil otherwise.
    public func grid(callingFrom time: Double) -> FrameGrid? {
        guard recent.count >= 5, let period = reportPeriod, Self.reportPeriods.contains(period),
            let anchor = onTimeReport
        else { return nil }
        var report = anchor
        var ahead = self
        // From a time more than `longestGap` periods ahead (a pad that stopped reporting, or a time far beyond its
        // last report), the reports before the last `reportsRunAfterAGap` are passed over at once, the calls made
        // before them run on the first, as `report(at:)` does after such a gap: each report was run, and from a
        // time so far that a period no longer moves it (1e300) the loop never ended.
        let periodsAhead = (time - anchor) / period
        if periodsAhead > Double(Self.longestGap) {
            report = anchor + (periodsAhead - Double(Self.reportsRunAfterAGap)).rounded(.down) * period
            ahead.run(until: report)
        }
        while report + period < time, report + period > report {
            report += period
            ahead.run(until: report)
        }
        // A send on a report that came late is on that report's on-time instant's parity.
        let send = ahead.worker.lastSendOnReport.map {
            anchor + (($0 - anchor) / period + Self.earlySlack).rounded(.down) * period
        }
        return FrameGrid(origin: (send ?? report) + rules.sendDelay, period: 2 * period)
    }
}
