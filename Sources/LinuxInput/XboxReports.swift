// Output report 3 of the Xbox Wireless Controller over Bluetooth (hid-microsoft): the rumble command for all
// four motors, the two in the body and the two in the triggers. hid-microsoft writes it for FF_RUMBLE with only
// the body motors enabled; we write it through hidraw to drive the trigger motors. Pure: bytes in, bytes out.
// The emulated controller decodes what it receives with the same code.

/// The rumble command carried by output report 3: an enable mask and one 0...100 level per actuator,
/// plus the timing the controller plays it with.
package struct XboxRumbleReport: Sendable, Hashable {
    /// Bit 0: right (weak) motor, bit 1: left (strong) motor, bit 2: right trigger, bit 3: left trigger.
    package var enable: UInt8
    /// Impulse trigger motors, 0...100.
    package var leftTrigger: UInt8
    package var rightTrigger: UInt8
    /// The left, low-frequency motor, 0...100.
    package var strong: UInt8
    /// The right, high-frequency motor, 0...100.
    package var weak: UInt8
    /// How long one play lasts, in 10 ms units: the controller stops the enabled motors by itself after it.
    package var duration: UInt8
    /// Wait before the first play, in 10 ms units.
    package var startDelay: UInt8
    /// Further repetitions after the first play.
    package var loopCount: UInt8

    /// The report's id, its first byte.
    package static let reportID: UInt8 = 0x03
    /// The report's length including the id byte.
    package static let length = 9

    package static let enableWeak: UInt8 = 0x01
    package static let enableStrong: UInt8 = 0x02
    package static let enableRightTrigger: UInt8 = 0x04
    package static let enableLeftTrigger: UInt8 = 0x08

    package init(
        enable: UInt8, leftTrigger: UInt8 = 0, rightTrigger: UInt8 = 0, strong: UInt8, weak: UInt8,
        duration: UInt8 = 0xff, startDelay: UInt8 = 0, loopCount: UInt8 = 0xff
    ) {
        self.enable = enable
        self.leftTrigger = leftTrigger
        self.rightTrigger = rightTrigger
        self.strong = strong
        self.weak = weak
        self.duration = duration
        self.startDelay = startDelay
        self.loopCount = loopCount
    }

    /// Parses `03 enable LT RT strong weak duration delay loop`; nil for any other report.
    package init?(bytes: [UInt8]) {
        guard bytes.count >= Self.length, bytes[0] == Self.reportID else { return nil }
        self.init(
            enable: bytes[1], leftTrigger: bytes[2], rightTrigger: bytes[3], strong: bytes[4],
            weak: bytes[5], duration: bytes[6], startDelay: bytes[7], loopCount: bytes[8])
    }

    /// The report as the driver writes it.
    package var bytes: [UInt8] {
        [Self.reportID, enable, leftTrigger, rightTrigger, strong, weak, duration, startDelay, loopCount]
    }

    /// The 0...100 level hid-microsoft writes for an FF_RUMBLE magnitude: `magnitude * 100 / 65535`,
    /// truncated, so only a full 0xffff reaches 100.
    package static func percent(fromRumbleMagnitude magnitude: UInt16) -> UInt8 {
        UInt8(UInt32(magnitude) * 100 / UInt32(UInt16.max))
    }
}
