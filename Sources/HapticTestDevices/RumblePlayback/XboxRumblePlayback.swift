// The emulated Xbox Wireless Controller's four motors over time: what they play of the rumble commands (output
// report 3) they received, with the report's own timing. The controller's firmware is not published; this is our
// model of it, and each choice below is the reading that keeps motors running longest where the sources leave a
// doubt, so that a test of "stops by itself" that passes against it passes against the pad:
//
// - A report replaces the whole command at its arrival: all four motors take the new report's levels.
// - Its enabled motors wait `startDelay` x 10 ms at rest, then run for `duration` x 10 ms x (`loopCount` + 1):
//   the loop count is read as further plays after the first, back to back. hid-microsoft writes duration 0xff
//   and loop count 0xff so that the two together cover its longest effect: it reads the play length as duration
//   times plays, with 0xff as no special value; SDL writes `FF 00 EB`. Both run about ten minutes (652.8 s and 601.8 s): "until the next report" on any
//   test's time scale. The start delay is taken once, before the first play (the HID Physical Interface usage
//   the descriptor names, Start Delay). A duration of 0 plays nothing.
// - A motor whose enable bit is clear in a report is stopped by it, as the emulator's record has always decoded
//   the body motors. So hid-microsoft's rumble report (enable 0x03, triggers at 0) stops the trigger motors that
//   another writer started: the conflict between the kernel's rumble and a trigger writer shows in the model.
//   SDL always enables all four (0x0f) and never relies on either reading.
// Pure: fed the record, it answers what played when.

/// The levels of the four motors at one moment, each 0...1 of 100.
package struct XboxMotorLevels: Sendable, Hashable {
    package var leftTrigger: Double
    package var rightTrigger: Double
    package var strong: Double
    package var weak: Double

    package init(leftTrigger: Double = 0, rightTrigger: Double = 0, strong: Double = 0, weak: Double = 0) {
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
        self.strong = strong
        self.weak = weak
    }

    /// Every motor at rest.
    package static let rest = XboxMotorLevels()

    package var isAtRest: Bool { self == .rest }

    package subscript(motor: XboxMotor) -> Double {
        get {
            switch motor {
            case .leftTrigger: leftTrigger
            case .rightTrigger: rightTrigger
            case .strong: strong
            case .weak: weak
            }
        }
        set {
            switch motor {
            case .leftTrigger: leftTrigger = newValue
            case .rightTrigger: rightTrigger = newValue
            case .strong: strong = newValue
            case .weak: weak = newValue
            }
        }
    }
}

/// The duration model of the Xbox Wireless Controller's motors (see the file header), fed in arrival order.
package struct XboxRumblePlayback: Sendable {
    /// Seconds per unit of the report's duration and start delay.
    package static let timeUnit = 0.01

    /// A command the motors received, and when it plays.
    package struct Command: Sendable, Hashable {
        /// When it arrived: seconds on `CLOCK_MONOTONIC` (the record's `time`).
        package var arrival: Double
        package var packet: XboxRumblePacket

        package init(arrival: Double, packet: XboxRumblePacket) {
            self.arrival = arrival
            self.packet = packet
        }

        /// What its enabled motors run at while it plays.
        package var levels: XboxMotorLevels {
            var levels = XboxMotorLevels.rest
            for motor in XboxMotor.allCases where packet.enables(motor) { levels[motor] = packet.magnitude(motor) }
            return levels
        }

        /// When its motors start: after the start delay.
        package var start: Double { arrival + Double(packet.startDelay) * XboxRumblePlayback.timeUnit }

        /// When its motors stop by themselves: `duration` x (`loopCount` + 1) after the start.
        package var end: Double {
            start + Double(packet.duration * (packet.loopCount + 1)) * XboxRumblePlayback.timeUnit
        }
    }

    /// Every command received, in arrival order.
    package private(set) var commands: [Command] = []

    package init() {}

    /// The playback of every decoded report 3 in `records`, in their order.
    package init(records: some Sequence<PadRecord>) {
        for record in records {
            if let packet = record.xboxRumble { receive(packet, at: record.time) }
        }
    }

    /// Takes a command that arrived at `time`.
    package mutating func receive(_ packet: XboxRumblePacket, at time: PadTimestamp) {
        commands.append(Command(arrival: time.seconds, packet: packet))
    }

    /// The levels of the four motors at `time`: the last command that arrived at or before it, while it plays
    /// (from its start, up to but not including its end); at rest otherwise.
    package func levels(at time: Double) -> XboxMotorLevels {
        let index = commands.countArrived(by: time, arrival: \.arrival)
        guard index > 0 else { return .rest }
        let command = commands[index - 1]
        return time >= command.start && time < command.end ? command.levels : .rest
    }

    /// The first time from which every motor is at rest for good: the latest moment any command still moved a
    /// motor (its end, or the arrival of the command that replaced it while it played); minus infinity when none
    /// ever moved one. Every command ends by itself, so this is always a time.
    package var restingFrom: Double {
        var last = -Double.infinity
        for (index, command) in commands.enumerated() where !command.levels.isAtRest {
            let replaced = index + 1 < commands.count ? commands[index + 1].arrival : .infinity
            let end = min(command.end, replaced)
            if end > command.start { last = max(last, end) }
        }
        return last
    }
}
