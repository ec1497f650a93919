// What an emulated HID game controller is to the kernel: an identity and report descriptor that make the
// upstream driver bind, answers to what the driver asks while probing, and a decoder that turns each report
// the driver sends into the motor levels the real controller would run. Pure: no I/O, no Glibc; the uhid
// transport (`UHIDController`) carries the bytes.
package import HapticRendering

/// The bus a HID device says it is on (`BUS_USB`, `BUS_BLUETOOTH` in linux/input.h): drivers branch on it.
package enum HIDBus: UInt16, Sendable, Hashable {
    case usb = 0x03
    case bluetooth = 0x05
}

/// The kinds of HID report (`UHID_FEATURE_REPORT`, `UHID_OUTPUT_REPORT`, `UHID_INPUT_REPORT`).
package enum HIDReportType: UInt8, Sendable, Hashable {
    case feature = 0
    case output = 1
    case input = 2
}

/// Who the controller says it is: what `UHID_CREATE2` carries.
package struct HIDIdentity: Sendable, Hashable {
    package var bus: HIDBus
    package var vendor: UInt16
    package var product: UInt16
    package var version: UInt32
    package var country: UInt32
    /// The name the driver sees (`hdev->name`): some drivers and every game library match on it.
    package var name: String
    /// `hdev->phys`: the physical path (a USB port, a Bluetooth adapter address).
    package var phys: String
    /// `hdev->uniq`: a serial or Bluetooth address; hid-sony reads a Bluetooth DualShock 4's MAC from here.
    package var uniq: String
    package var reportDescriptor: [UInt8]

    package init(
        bus: HIDBus, vendor: UInt16, product: UInt16, version: UInt32 = 0, country: UInt32 = 0, name: String,
        phys: String = "", uniq: String = "", reportDescriptor: [UInt8]
    ) {
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
        self.country = country
        self.name = name
        self.phys = phys
        self.uniq = uniq
        self.reportDescriptor = reportDescriptor
    }
}

/// What the motors of the real controller would run after a report: the two levels, in the renderer's own
/// type (0...1 of full drive per motor), plus what a model knows beyond two levels.
package struct EmulatedMotorOutput: Sendable, Hashable {
    /// The strong (low-frequency, left) and weak (high-frequency, right) motor.
    package var levels: MotorMagnitudes
    /// HD rumble: the frequency each actuator is driven at, in Hz (the Switch Pro Controller's low band is
    /// its strong motor, the high band its weak one).
    package var strongFrequency: Double?
    package var weakFrequency: Double?
    /// The vibration mode the report selects (DualSense: `compatible` before firmware update 2.21, `v2` from it).
    package var mode: String?

    package init(
        strong: Double, weak: Double, strongFrequency: Double? = nil, weakFrequency: Double? = nil,
        mode: String? = nil
    ) {
        levels = MotorMagnitudes(strong: strong, weak: weak)
        self.strongFrequency = strongFrequency
        self.weakFrequency = weakFrequency
        self.mode = mode
    }

    /// The strong motor, 0...1.
    package var strong: Double {
        get { levels.strong }
        set { levels.strong = newValue }
    }

    /// The weak motor, 0...1.
    package var weak: Double {
        get { levels.weak }
        set { levels.weak = newValue }
    }

    /// Both motors at rest.
    package static let off = EmulatedMotorOutput(strong: 0, weak: 0)
}

/// How a report reached the controller.
package enum HIDOutputPath: Sendable, Hashable {
    /// An output report on the interrupt channel (`hid_hw_output_report`, uhid's `UHID_OUTPUT`).
    case interrupt
    /// A SET_REPORT request on the control channel (`hid_hw_raw_request`, uhid's `UHID_SET_REPORT`).
    case setReport(HIDReportType)
}

/// What the controller does with a report from the driver.
package struct HIDOutputResponse: Sendable, Hashable {
    /// The motor levels the report sets; nil when it sets none (lights, mode switches, subcommands).
    package var motors: EmulatedMotorOutput?
    /// Input reports the controller sends back at once (subcommand replies).
    package var replies: [[UInt8]]
    /// The waveform the report carries for the controller's actuators (the DualSense's haptics report).
    package var waveform: WaveformPacket?
    /// The HD rumble the report carries (the Switch Pro Controller's 0x10 and 0x01 reports).
    package var hdRumble: SwitchRumblePacket?
    /// The four-motor rumble command the report carries (the Xbox Wireless Controller's report 3).
    package var xboxRumble: XboxRumblePacket?
    /// The PID report the report is, decoded (the PID joystick's reports).
    package var pid: PIDReport?

    package init(
        motors: EmulatedMotorOutput? = nil, replies: [[UInt8]] = [], waveform: WaveformPacket? = nil,
        hdRumble: SwitchRumblePacket? = nil, xboxRumble: XboxRumblePacket? = nil, pid: PIDReport? = nil
    ) {
        self.motors = motors
        self.replies = replies
        self.waveform = waveform
        self.hdRumble = hdRumble
        self.xboxRumble = xboxRumble
        self.pid = pid
    }

    /// A report the controller takes and ignores.
    package static let ignored = HIDOutputResponse()
}

/// A game controller model presented to the kernel over uhid. Mutating methods run on the transport's one
/// thread, in the order the kernel's requests arrive.
package protocol HIDControllerModel: Sendable {
    /// The identity and report descriptor; `uniq` and `name` may be overridden by the caller before creation.
    var identity: HIDIdentity { get set }

    /// Answers a GET_REPORT request (`hid_hw_raw_request(HID_REQ_GET_REPORT)`): the report's bytes, its id
    /// first when the descriptor numbers reports, or nil to fail the request with `EIO` as a controller that
    /// does not know the report would.
    mutating func getReport(id: UInt8, type: HIDReportType) -> [UInt8]?

    /// Takes a report the driver sent and decodes it.
    mutating func receive(_ report: [UInt8], via path: HIDOutputPath) -> HIDOutputResponse

    /// Seconds between the input reports a controller streams on its own while open (nil: it sends none
    /// unless asked). The Switch Pro Controller's driver paces its rumble on these reports.
    var inputReportInterval: Double? { get }

    /// The next streamed input report.
    mutating func nextInputReport() -> [UInt8]?
}

extension HIDControllerModel {
    package var inputReportInterval: Double? { nil }
    package mutating func nextInputReport() -> [UInt8]? { nil }
}
