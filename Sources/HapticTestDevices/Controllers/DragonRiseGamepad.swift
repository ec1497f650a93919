// A DragonRise "Generic USB Joystick" (0079:0006), the chip inside many cheap PlayStation-style USB pads,
// as hid-dr binds it: the pad's 101-byte report descriptor, whose 7-byte output report is what the
// driver's force feedback needs, and a decoder for the commands the driver writes into that report.
//
// Transport: hid-dr sends its commands with `hid_hw_request` from ff-memless's play callback, which runs
// under a spinlock. usbhid queues such requests; uhid (6.1) has no queue and turns them into a
// SET_REPORT that waits for user space, so over uhid the kernel sleeps in atomic context and the guest
// locks up at the first rumble. Present this model as a USB device (a HID gadget) for playback; over uhid
// only binding and the probe-time stop command work.

/// A command in the pad's 7-byte output report, told apart by its first two bytes.
package enum DragonRiseCommand: Sendable, Hashable {
    /// `51 00 weak 00 strong 00 00`: load motor levels, each 0...255.
    case setLevels(strong: UInt8, weak: UInt8)
    /// `fa fe 00 00 00 00 00`: the driver follows every `setLevels` with it; the motors keep running.
    case commit
    /// `f3 00 00 00 00 00 00`: stop both motors.
    case stop
    /// Any other bytes.
    case unknown

    /// The length of the output report (the descriptor numbers no reports, so there is no id byte).
    package static let length = 7

    /// Recognises a command from the report's bytes: the 7 bytes as they travel on the USB interrupt
    /// endpoint, or 8 bytes led by report number 0 as a SET_REPORT request carries them.
    package init(bytes: [UInt8]) {
        let bytes = bytes.count == Self.length + 1 && bytes[0] == 0 ? Array(bytes.dropFirst()) : bytes
        guard bytes.count >= Self.length else {
            self = .unknown
            return
        }
        switch (bytes[0], bytes[1]) {
        case (0x51, 0x00): self = .setLevels(strong: bytes[4], weak: bytes[2])
        case (0xfa, 0xfe): self = .commit
        case (0xf3, 0x00): self = .stop
        default: self = .unknown
        }
    }

    /// The report bytes of the command; nil for `unknown`.
    package var bytes: [UInt8]? {
        switch self {
        case let .setLevels(strong, weak): [0x51, 0x00, weak, 0x00, strong, 0x00, 0x00]
        case .commit: [0xfa, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x00]
        case .stop: [0xf3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        case .unknown: nil
        }
    }
}

/// A DragonRise USB gamepad with two rumble motors, bound by hid-dr.
package struct DragonRiseGamepad: HIDControllerModel {
    package var identity: HIDIdentity
    /// What the motors run now.
    package private(set) var motors = EmulatedMotorOutput.off

    package static let vendorID: UInt16 = 0x0079
    package static let productID: UInt16 = 0x0006
    /// A weak level of 10 makes the pad run its strong motor near full speed whatever the strong level;
    /// the driver sends 11 instead, but the pad's behaviour is modelled for reports that carry it.
    package static let weakLevelThatRacesStrongMotor: UInt8 = 0x0a

    /// - Parameters:
    ///   - name: the USB manufacturer and product strings as the kernel joins them (the pad pads both
    ///     with spaces).
    ///   - uniq: the pad has no serial number.
    ///   - phys: the USB port.
    package init(
        name: String = "DragonRise Inc.   Generic   USB  Joystick  ", uniq: String = "",
        phys: String = "usb-0000:00:14.0-2/input0"
    ) {
        identity = HIDIdentity(
            bus: .usb, vendor: Self.vendorID, product: Self.productID, version: 0x0107, country: 0x21,
            name: name, phys: phys, uniq: uniq, reportDescriptor: Self.reportDescriptor)
    }

    /// Answers GET_REPORT for the input report with the pad at rest; the pad has no feature reports.
    package mutating func getReport(id: UInt8, type: HIDReportType) -> [UInt8]? {
        id == 0 && type == .input ? Self.neutralInputReport : nil
    }

    package mutating func receive(_ report: [UInt8], via path: HIDOutputPath) -> HIDOutputResponse {
        switch DragonRiseCommand(bytes: report) {
        case let .setLevels(strong, weak):
            motors = Self.motorLevels(strong: strong, weak: weak)
            return HIDOutputResponse(motors: motors)
        case .stop:
            motors = .off
            return HIDOutputResponse(motors: motors)
        case .commit, .unknown:
            return .ignored
        }
    }

    /// The 0...255 level hid-dr writes for a non-zero FF_RUMBLE magnitude pair: `magnitude * 255 / 65535`
    /// (exact, 0x0101 per step), with a weak level of 10 sent as 11.
    package static func levels(fromRumbleStrong strong: UInt16, weak: UInt16) -> (strong: UInt8, weak: UInt8) {
        let weakLevel = UInt8(UInt32(weak) * 255 / UInt32(UInt16.max))
        return (
            UInt8(UInt32(strong) * 255 / UInt32(UInt16.max)),
            weakLevel == weakLevelThatRacesStrongMotor ? weakLevel + 1 : weakLevel
        )
    }

    /// The motor levels a `51` command sets.
    package static func motorLevels(strong: UInt8, weak: UInt8) -> EmulatedMotorOutput {
        let strongLevel = weak == weakLevelThatRacesStrongMotor ? 1.0 : Double(strong) / 255
        return EmulatedMotorOutput(strong: strongLevel, weak: Double(weak) / 255)
    }

    /// The 8-byte input report at rest: four centred axes and a fifth (the second Z) centred, hat
    /// released (null), no button.
    package static let neutralInputReport: [UInt8] = [0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x0f, 0x00, 0x00]

    /// Input: five 8-bit axes (X, Y, Z, Z, Rz), a 4-bit hat, 12 buttons and 8 vendor bits; output: 7
    /// vendor bytes carrying the rumble commands.
    package static let reportDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x04, 0xa1, 0x01,  // Generic Desktop, Joystick, Application
        0xa1, 0x02, 0x75, 0x08, 0x95, 0x05,  // Logical { 5 x 8 bits
        0x15, 0x00, 0x26, 0xff, 0x00, 0x35, 0x00, 0x46, 0xff, 0x00,  // 0...255
        0x09, 0x30, 0x09, 0x31, 0x09, 0x32, 0x09, 0x32, 0x09, 0x35, 0x81, 0x02,  // X, Y, Z, Z, Rz
        0x75, 0x04, 0x95, 0x01, 0x25, 0x07, 0x46, 0x3b, 0x01, 0x65, 0x14,  // 4 bits 0...7, 0...315 deg
        0x09, 0x39, 0x81, 0x42, 0x65, 0x00,  // Hat switch, null state
        0x75, 0x01, 0x95, 0x0c, 0x25, 0x01, 0x45, 0x01,  // 12 x 1 bit
        0x05, 0x09, 0x19, 0x01, 0x29, 0x0c, 0x81, 0x02,  // Buttons 1...12
        0x06, 0x00, 0xff, 0x75, 0x01, 0x95, 0x08, 0x25, 0x01, 0x45, 0x01,  // Vendor page, 8 x 1 bit
        0x09, 0x01, 0x81, 0x02, 0xc0,  // vendor usage 1 }
        0xa1, 0x02, 0x75, 0x08, 0x95, 0x07, 0x46, 0xff, 0x00, 0x26, 0xff, 0x00,  // Logical { 7 x 8 bits
        0x09, 0x02, 0x91, 0x02, 0xc0,  // vendor usage 2, Output }
        0xc0,
    ]
}
