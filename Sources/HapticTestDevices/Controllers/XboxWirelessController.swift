// The Xbox Wireless Controller (model 1914, the Xbox Series X|S pad) connected over Bluetooth LE, as
// hid-microsoft binds it: the controller's own 283-byte report descriptor, so hid-input builds the same
// gamepad as for the real pad, and a decoder for output report 3, the only report the driver sends. The
// driver asks nothing while probing and never reads a report back. The report's format is LinuxInput's
// XboxRumbleReport.

package import LinuxInput

extension XboxRumbleReport {
    /// What the two body motors run: an enabled motor at its level (the controller caps levels at 100),
    /// a disabled one stopped.
    package var motors: EmulatedMotorOutput {
        EmulatedMotorOutput(
            strong: Self.level(strong, enabled: enable & Self.enableStrong != 0),
            weak: Self.level(weak, enabled: enable & Self.enableWeak != 0))
    }

    private static func level(_ magnitude: UInt8, enabled: Bool) -> Double {
        enabled ? Double(min(magnitude, 100)) / 100 : 0
    }
}

/// An Xbox Wireless Controller on Bluetooth, bound by hid-microsoft (which gives the pad's Bluetooth
/// product ids force feedback) and decoded from its rumble reports.
package struct XboxWirelessController: HIDControllerModel {
    package var identity: HIDIdentity
    /// The last rumble command received, with the trigger levels and timing `motors` leaves out.
    package private(set) var lastRumble: XboxRumbleReport?

    /// Microsoft's vendor id.
    package static let vendorID: UInt16 = 0x045e
    /// Model 1914 (Xbox Series X|S controller) on Bluetooth LE.
    package static let productID: UInt16 = 0x0b13

    /// - Parameters:
    ///   - name: the name the pad advertises.
    ///   - uniq: the controller's Bluetooth address.
    ///   - phys: the host adapter's Bluetooth address.
    package init(
        name: String = "Xbox Wireless Controller", uniq: String = "98:7a:14:52:1c:3e",
        phys: String = "00:1a:7d:da:71:13"
    ) {
        identity = HIDIdentity(
            bus: .bluetooth, vendor: Self.vendorID, product: Self.productID, version: 0x0509, name: name,
            phys: phys, uniq: uniq, reportDescriptor: Self.reportDescriptor)
    }

    /// The controller defines no feature reports; a GET_REPORT fails as it does on the pad.
    package mutating func getReport(id: UInt8, type: HIDReportType) -> [UInt8]? { nil }

    package mutating func receive(_ report: [UInt8], via path: HIDOutputPath) -> HIDOutputResponse {
        guard let rumble = XboxRumbleReport(bytes: report) else { return .ignored }
        lastRumble = rumble
        return HIDOutputResponse(motors: rumble.motors, xboxRumble: XboxRumblePacket(rumble))
    }

    /// Input report 1 with the sticks centred, triggers released and no button held: what the pad sends
    /// when nothing moves.
    package static let neutralInputReport: [UInt8] = [
        0x01, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    /// The pad's Bluetooth report descriptor: input report 1 (sticks, triggers, hat, 15 buttons, Share)
    /// and output report 3 (rumble, in the Physical Interface Device page).
    package static let reportDescriptor: [UInt8] =
        gamepadInputDescriptor + rumbleOutputDescriptor + [0xc0]

    /// Report 1: two 16-bit sticks, two 10-bit triggers, a hat, 15 buttons and the Share (Record) key.
    private static let gamepadInputDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01,  // Generic Desktop, Game Pad, Application, id 1
        0x09, 0x01, 0xa1, 0x00, 0x09, 0x30, 0x09, 0x31,  // Pointer { X, Y
        0x15, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00,  //   0...65535
        0x95, 0x02, 0x75, 0x10, 0x81, 0x02, 0xc0,  //   2 x 16 bits }
        0x09, 0x01, 0xa1, 0x00, 0x09, 0x32, 0x09, 0x35,  // Pointer { Z, Rz
        0x15, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00,  //   0...65535
        0x95, 0x02, 0x75, 0x10, 0x81, 0x02, 0xc0,  //   2 x 16 bits }
        0x05, 0x02, 0x09, 0xc5, 0x15, 0x00, 0x26, 0xff, 0x03,  // Simulation: Brake 0...1023
        0x95, 0x01, 0x75, 0x0a, 0x81, 0x02,  // 10 bits
        0x15, 0x00, 0x25, 0x00, 0x75, 0x06, 0x95, 0x01, 0x81, 0x03,  // 6 bits padding
        0x05, 0x02, 0x09, 0xc4, 0x15, 0x00, 0x26, 0xff, 0x03,  // Simulation: Accelerator 0...1023
        0x95, 0x01, 0x75, 0x0a, 0x81, 0x02,  // 10 bits
        0x15, 0x00, 0x25, 0x00, 0x75, 0x06, 0x95, 0x01, 0x81, 0x03,  // 6 bits padding
        0x05, 0x01, 0x09, 0x39, 0x15, 0x01, 0x25, 0x08,  // Hat switch 1...8
        0x35, 0x00, 0x46, 0x3b, 0x01, 0x66, 0x14, 0x00,  // 0...315 degrees
        0x75, 0x04, 0x95, 0x01, 0x81, 0x42,  // 4 bits, null state
        0x75, 0x04, 0x95, 0x01, 0x15, 0x00, 0x25, 0x00,  // 4 bits padding
        0x35, 0x00, 0x45, 0x00, 0x65, 0x00, 0x81, 0x03,
        0x05, 0x09, 0x19, 0x01, 0x29, 0x0f, 0x15, 0x00, 0x25, 0x01,  // Buttons 1...15
        0x75, 0x01, 0x95, 0x0f, 0x81, 0x02,
        0x15, 0x00, 0x25, 0x00, 0x75, 0x01, 0x95, 0x01, 0x81, 0x03,  // 1 bit padding
        0x05, 0x0c, 0x0a, 0xb2, 0x00, 0x15, 0x00, 0x25, 0x01,  // Consumer: Record (Share)
        0x95, 0x01, 0x75, 0x01, 0x81, 0x02,
        0x15, 0x00, 0x25, 0x00, 0x75, 0x07, 0x95, 0x01, 0x81, 0x03,  // 7 bits padding
    ]

    /// Report 3: enable mask, four 0...100 magnitudes, duration, start delay and loop count.
    private static let rumbleOutputDescriptor: [UInt8] = [
        0x05, 0x0f, 0x09, 0x21, 0x85, 0x03, 0xa1, 0x02,  // PID page, Set Effect, id 3, Logical
        0x09, 0x97, 0x15, 0x00, 0x25, 0x01,  // DC Enable Actuators
        0x75, 0x04, 0x95, 0x01, 0x91, 0x02,  // 4 bits
        0x15, 0x00, 0x25, 0x00, 0x75, 0x04, 0x95, 0x01, 0x91, 0x03,  // 4 bits padding
        0x09, 0x70, 0x15, 0x00, 0x25, 0x64,  // Magnitude 0...100
        0x75, 0x08, 0x95, 0x04, 0x91, 0x02,  // 4 x 8 bits
        0x09, 0x50, 0x66, 0x01, 0x10, 0x55, 0x0e,  // Duration, seconds x 10^-2
        0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02,
        0x09, 0xa7, 0x15, 0x00, 0x26, 0xff, 0x00,  // Start Delay
        0x75, 0x08, 0x95, 0x01, 0x91, 0x02,
        0x65, 0x00, 0x55, 0x00, 0x09, 0x7c, 0x15, 0x00, 0x26, 0xff, 0x00,  // Loop Count
        0x75, 0x08, 0x95, 0x01, 0x91, 0x02,
        0xc0,  // end Logical
    ]
}
