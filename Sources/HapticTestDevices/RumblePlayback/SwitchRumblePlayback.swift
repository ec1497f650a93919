// The emulated Switch Pro Controller's actuators over time: what they play of the HD rumble frames they received
// (reports 0x10 and 0x01). How a real controller plays a frame is not published beyond "until the next one"; the
// model holds each frame from its arrival until the next frame arrives, for as long as it takes. That is the
// worst case for a writer that dies mid-pattern: the actuators keep the last frame forever, so only a frame at rest
// (every amplitude 0, as the neutral `00 01 40 40`) stops them, and a test that passes against the model passes
// against a controller that also times a frame out by itself. Pure: fed the record, it answers what played when.

/// The hold-last model of the Switch Pro Controller's two actuators, fed in arrival order.
package struct SwitchRumblePlayback: Sendable {
    /// A frame the actuators received.
    package struct Frame: Sendable, Hashable {
        /// When it arrived: seconds on `CLOCK_MONOTONIC` (the record's `time`).
        package var arrival: Double
        /// The report it came in (0x10 rumble only, 0x01 rumble plus a subcommand); nil when the record does not
        /// say.
        package var reportID: UInt8?
        package var packet: SwitchRumblePacket
    }

    /// What one actuator plays at a moment: the frequency of its dominant band (the one with the larger
    /// amplitude, the low one on a tie; nil at rest) and that band's amplitude, 0...1 of 1.003.
    package struct ActuatorReading: Sendable, Hashable {
        package var frequency: Double?
        package var amplitude: Double

        /// An actuator at rest.
        package static let rest = ActuatorReading(frequency: nil, amplitude: 0)

        init(_ actuator: SwitchRumblePacket.Actuator, played: Bool) {
            guard played, let band = actuator.dominantBand else {
                self = .rest
                return
            }
            self.init(frequency: band.frequency, amplitude: band.amplitude)
        }

        package init(frequency: Double?, amplitude: Double) {
            self.frequency = frequency
            self.amplitude = amplitude
        }
    }

    /// One frame of a sweep: when it arrived and what each actuator plays from then.
    package struct SweepPoint: Sendable, Hashable {
        package var time: Double
        package var left: ActuatorReading
        package var right: ActuatorReading
    }

    /// Every frame received, in arrival order.
    package private(set) var frames: [Frame] = []

    package init() {}

    /// The playback of every decoded HD rumble frame in `records`, in their order.
    package init(records: some Sequence<PadRecord>) {
        for record in records {
            guard let packet = record.hdRumble else { continue }
            receive(packet, at: record.time, reportID: record.report.flatMap(Self.reportID))
        }
    }

    /// Takes a frame that arrived at `time`.
    package mutating func receive(_ packet: SwitchRumblePacket, at time: PadTimestamp, reportID: UInt8? = nil) {
        frames.append(Frame(arrival: time.seconds, reportID: reportID, packet: packet))
    }

    /// The frame in effect at `time`: the last one that arrived at or before it (held until the next); nil
    /// before the first.
    package func frame(at time: Double) -> Frame? {
        let index = frames.countArrived(by: time, arrival: \.arrival)
        return index > 0 ? frames[index - 1] : nil
    }

    /// Whether both actuators are still at `time`: no frame yet, or a frame at rest or ignored in effect.
    package func isAtRest(at time: Double) -> Bool { frame(at: time)?.packet.isAtRest ?? true }

    /// The first time from which the actuators are at rest for good: the arrival of the first frame of the final
    /// run of frames at rest. Nil when the last frame moves an actuator (held for ever: the pad never stops by
    /// itself); minus infinity when no frame ever moved one.
    package var restingFrom: Double? {
        guard let lastMoving = frames.lastIndex(where: { !$0.packet.isAtRest }) else { return -.infinity }
        let next = lastMoving + 1
        return next < frames.count ? frames[next].arrival : nil
    }

    /// The spacing of the frames that arrived in `from...through` (everything by default), optionally only those
    /// of one report id: each one's arrival minus the one before it (the first in the window has none).
    package func intervals(
        from: Double = -.infinity, through: Double = .infinity, reportID: UInt8? = nil
    ) -> [Double] {
        let arrivals = window(from: from, through: through, reportID: reportID).map(\.arrival)
        return zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
    }

    /// For a check of a sharpness sweep: every frame that arrived in `from...through`, in order, with each
    /// actuator's dominant frequency and its amplitude (an ignored frame reads as rest).
    package func sweep(
        from: Double = -.infinity, through: Double = .infinity, reportID: UInt8? = nil
    ) -> [SweepPoint] {
        window(from: from, through: through, reportID: reportID).map { frame in
            SweepPoint(
                time: frame.arrival, left: ActuatorReading(frame.packet.left, played: frame.packet.played),
                right: ActuatorReading(frame.packet.right, played: frame.packet.played))
        }
    }

    private func window(from: Double, through: Double, reportID: UInt8?) -> [Frame] {
        frames.filter { frame in
            frame.arrival >= from && frame.arrival <= through && (reportID == nil || frame.reportID == reportID)
        }
    }

    /// The report id of a record's `report`: its first byte, from the first two hexadecimal digits.
    private static func reportID(_ hex: String) -> UInt8? { UInt8(hex.prefix(2), radix: 16) }
}
