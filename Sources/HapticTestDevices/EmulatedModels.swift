// The emulated game controllers, by the names `haptics emulate` takes: which kernel driver binds each, over
// which transport, and how to start one.
package import LinuxInput
package import Logging
@_spi(Internals) import LinuxSystem

/// A controller the kernel's own driver binds as if it were real: an uhid device, or a USB gadget.
package protocol EmulatedDevice: AnyObject, Sendable {
    /// Every record so far: one `output` record per report or packet the driver sent.
    func records() -> [PadRecord]
    /// Records from now on; finishes when the device is removed for good.
    func recordStream() -> AsyncStream<PadRecord>
    /// The input reports the device streamed by itself, when each was due and when it was written to the kernel
    /// (a Switch Pro Controller's, every 15 ms), the latest half minute or more; none for a device that streams
    /// none.
    func inputReports() -> [StreamedInputReport]
    /// What the motors run at after the last report.
    var motors: EmulatedMotorOutput { get }
    /// Waits until the driver has bound the device and its force-feedback node exists.
    func waitUntilBound(timeout: Double) throws(EmulationError) -> EmulatedDeviceNodes
    /// Unplugs it, as pulling its cable (or dropping its Bluetooth link) would: its driver lets go, clients
    /// see `ENODEV`. The record goes on.
    func unplug() throws(EmulationError)
    /// Plugs the same controller (same identity) back in; its driver binds it anew.
    func replug() throws(EmulationError)
    /// Removes the device for good and ends its record. Safe to call more than once.
    func destroy()
}

/// The models `haptics emulate` offers.
package enum EmulatedModel: String, CaseIterable, Sendable {
    case dualsense
    case dualsenseBluetooth = "dualsense-bt"
    case dualshock4
    case dualshock4Bluetooth = "dualshock4-bt"
    case xboxOneBluetooth = "xbox-one-bt"
    case switchPro = "switch-pro"
    case xbox360
    case dragonrise
    case pidJoystick = "pid-joystick"

    /// What the real controller is.
    package var product: String {
        switch self {
        case .dualsense: "Sony DualSense (054c:0ce6)"
        case .dualsenseBluetooth: "Sony DualSense over Bluetooth (054c:0ce6)"
        case .dualshock4: "Sony DualShock 4, second generation (054c:09cc)"
        case .dualshock4Bluetooth: "Sony DualShock 4 over Bluetooth (054c:09cc)"
        case .xboxOneBluetooth:
            "Xbox Wireless Controller over Bluetooth (045e:\(hex(XboxWirelessController.productID, digits: 4)))"
        case .switchPro: "Nintendo Switch Pro Controller, wired (057e:2009)"
        case .xbox360: "Xbox 360 wired controller (045e:028e)"
        case .dragonrise: "DragonRise generic USB rumble pad (0079:0006)"
        case .pidJoystick: "USB HID PID force-feedback joystick, pid.codes test id (1209:0001)"
        }
    }

    /// Whether the running kernel gives the DualShock 4 to hid-playstation: from 6.2 on; hid-sony before.
    package static var dualShock4IsPlayStations: Bool { Sys.kernelIsAtLeast(6, 2) }

    /// The kernel module that binds it, on the running kernel.
    package var module: String {
        switch self {
        case .dualsense, .dualsenseBluetooth: "hid-playstation"
        case .dualshock4, .dualshock4Bluetooth: Self.dualShock4IsPlayStations ? "hid-playstation" : "hid-sony"
        case .xboxOneBluetooth: "hid-microsoft"
        case .switchPro: "hid-nintendo"
        case .xbox360: "xpad"
        case .dragonrise: "hid-dr"
        // hid-generic binds it; usbhid's hid-pidff (built in) gives it force feedback.
        case .pidJoystick: "hid-generic"
        }
    }

    /// The module or modules that bind it on the kernels the bench boots, for names that do not depend on the
    /// kernel they are listed on (a test list is made on the host and run in the guest).
    package var modules: String {
        switch self {
        case .dualshock4, .dualshock4Bluetooth: "hid-sony-or-hid-playstation"
        default: module
        }
    }

    /// The driver's name in sysfs (`device/driver`), as `haptics probe` shows it.
    package var driver: String {
        switch self {
        case .dualsense, .dualsenseBluetooth: "playstation"
        case .dualshock4, .dualshock4Bluetooth: Self.dualShock4IsPlayStations ? "playstation" : "sony"
        case .xboxOneBluetooth: "microsoft"
        case .switchPro: "nintendo"
        case .xbox360: "xpad"
        case .dragonrise: "dragonrise"
        case .pidJoystick: "hid-generic"
        }
    }

    /// How it reaches the kernel.
    /// Whether it is a USB gadget on the dummy host controller: its driver names it by the real pad's USB strings,
    /// so a name of the caller's cannot reach it (the uhid models take one).
    package var isUSBGadget: Bool {
        switch self {
        case .xbox360, .dragonrise, .pidJoystick: true
        default: false
        }
    }

    package var transport: String {
        switch self {
        case .dualsense, .dualshock4, .switchPro: "USB HID over uhid"
        case .dualsenseBluetooth, .dualshock4Bluetooth, .xboxOneBluetooth: "Bluetooth HID over uhid"
        case .xbox360: "USB gadget (dummy_hcd + FunctionFS)"
        // hid-dr sends its reports from ff-memless's atomic context: only usbhid's queue takes them.
        case .dragonrise: "USB HID gadget (dummy_hcd + FunctionFS, usbhid)"
        // hid-pidff is part of usbhid: only a USB HID device gets it.
        case .pidJoystick: "USB HID gadget (dummy_hcd + FunctionFS, usbhid + hid-pidff)"
        }
    }

    /// Whether it reaches the kernel as a USB gadget (dummy_hcd and FunctionFS) rather than over /dev/uhid.
    package var overUSBGadget: Bool { self == .xbox360 || self == .dragonrise || self == .pidJoystick }

    /// Whether it has two rumble motors whose levels its record decodes: every pad but the PID joystick, a
    /// force-feedback device running constant and periodic effects (its node offers `FF_RUMBLE` only as the
    /// input core's emulation, a 50 ms sine). What the rumble tests and benchmarks iterate over.
    package var hasRumbleMotors: Bool { self != .pidJoystick }

    /// The largest step of the controller's motor scale, 0...1: how far a decoded level may be from the
    /// level asked for and still be the nearest the controller can run. Byte levels (0...255) for most;
    /// 0...100 for the Xbox Wireless Controller; the widest gap of the HD rumble amplitude table for the Switch
    /// Pro Controller; two bytes for DragonRise, whose driver moves a weak level of 10 to 11.
    package var motorStep: Double {
        switch self {
        case .dualsense, .dualsenseBluetooth, .dualshock4, .dualshock4Bluetooth, .xbox360: return 1.0 / 255
        case .dragonrise: return 2.0 / 255
        // No motors: its levels are the PID reports' 16-bit magnitudes.
        case .pidJoystick: return 1.0 / 0x7fff
        case .xboxOneBluetooth: return 1.0 / 100
        case .switchPro:
            let steps = SwitchRumbleActuator.amplitudeSteps
            let widest = zip(steps, steps.dropFirst()).map { $1 - $0 }.max() ?? 1
            return Double(widest) / Double(steps.last ?? 1)
        }
    }

    /// The HID model behind the controller; nil for the Xbox 360 pad, which is no HID device.
    package func hidModel(name: String? = nil, uniq: String? = nil) -> (any HIDControllerModel)? {
        var model: any HIDControllerModel
        switch self {
        case .dualsense: model = DualSense(transport: .usb, name: name, uniq: uniq)
        case .dualsenseBluetooth: model = DualSense(transport: .bluetooth, name: name, uniq: uniq)
        case .dualshock4: model = DualShock4(transport: .usb, name: name, uniq: uniq)
        case .dualshock4Bluetooth: model = DualShock4(transport: .bluetooth, name: name, uniq: uniq)
        case .switchPro: model = SwitchProController(transport: .usb, name: name, uniq: uniq)
        case .xboxOneBluetooth: model = XboxWirelessController()
        case .dragonrise: model = DragonRiseGamepad()
        case .pidJoystick: model = PIDJoystick()
        case .xbox360: return nil
        }
        if let name { model.identity.name = name }
        if let uniq { model.identity.uniq = uniq }
        return model
    }

    /// Creates the controller; the driver binds it asynchronously (`waitUntilBound`).
    package func start(
        name: String? = nil, uniq: String? = nil, recordPath: String? = nil, keepsRecords: Bool = true,
        logger: Logger
    ) throws(EmulationError) -> any EmulatedDevice {
        guard let model = hidModel(name: name, uniq: uniq) else {
            return try FunctionFSGadget(
                Xbox360Gadget(serialNumber: uniq ?? Xbox360Gadget.defaultSerialNumber), driver: module,
                recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
        }
        if self == .dragonrise {
            // The real pad's USB strings (usbhid joins them into its name) and no serial number.
            let gadget = HIDGadget(
                model, manufacturer: "DragonRise Inc.  ", product: "Generic   USB  Joystick  ",
                serialNumber: uniq ?? "", deviceRelease: 0x0107)
            return try FunctionFSGadget(
                gadget, driver: module, recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
        }
        if self == .pidJoystick {
            return try Self.startPIDJoystick(
                model, uniq: uniq, recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
        }
        return try EmulatedHIDDevice(
            model: model, driver: module, recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
    }
}

extension EmulatedModel {
    /// A Joy-Con on hid-nintendo: alone over Bluetooth, or in the charging grip over USB (`inGrip`). Not one of the
    /// models `haptics emulate` offers: the kernel tests play on it to check what a Joy-Con's one motor is given.
    package static func startJoyCon(
        _ side: HDActuators.JoyConSide, inGrip: Bool, logger: Logger
    ) throws(EmulationError) -> any EmulatedDevice {
        let model = SwitchProController(transport: inGrip ? .usb : .bluetooth, joyCon: side)
        return try EmulatedHIDDevice(
            model: model, driver: switchPro.module, recordPath: nil, keepsRecords: true, logger: logger)
    }

    /// The PID joystick with a pool of `capacity` effect blocks (1...40; `start` gives it 16): the device
    /// answers "full" to the upload after that many, whatever the 40 slots the kernel offers.
    package static func startPIDJoystick(
        capacity: Int, uniq: String? = nil, recordPath: String? = nil, keepsRecords: Bool = true, logger: Logger
    ) throws(EmulationError) -> any EmulatedDevice {
        try startPIDJoystick(
            PIDJoystick(capacity: capacity), uniq: uniq, recordPath: recordPath, keepsRecords: keepsRecords,
            logger: logger)
    }

    private static func startPIDJoystick(
        _ model: any HIDControllerModel, uniq: String?, recordPath: String?, keepsRecords: Bool, logger: Logger
    ) throws(EmulationError) -> any EmulatedDevice {
        let gadget = HIDGadget(
            model, manufacturer: PIDJoystick.manufacturer, product: PIDJoystick.product, serialNumber: uniq ?? "",
            deviceRelease: 0x0100)
        return try FunctionFSGadget(
            gadget, driver: pidJoystick.module, recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
    }
}

/// A uhid controller as an `EmulatedDevice`: unplugging destroys the uhid device, plugging back in creates a
/// new one from the same model, recording into the same log.
final class EmulatedHIDDevice: EmulatedDevice {
    private let model: any HIDControllerModel
    private let driver: String
    private let log: DeviceRecordLog
    private let logger: Logger
    private let controller: Lock<UHIDController?>

    init(model: any HIDControllerModel, driver: String, recordPath: String?, keepsRecords: Bool, logger: Logger)
        throws(EmulationError)
    {
        do { log = try DeviceRecordLog(path: recordPath, keepsRecords: keepsRecords, logger: logger) } catch {
            throw .recordFileFailed(error)
        }
        self.model = model
        self.driver = driver
        self.logger = logger
        controller = Lock(try UHIDController(model, log: log, ownsLog: false, logger: logger))
    }

    deinit { destroy() }

    func records() -> [PadRecord] { log.records() }
    func recordStream() -> AsyncStream<PadRecord> { log.subscribe() }
    func inputReports() -> [StreamedInputReport] { log.inputReports() }
    var motors: EmulatedMotorOutput { controller.withLock { $0?.motors } ?? .off }

    func waitUntilBound(timeout: Double) throws(EmulationError) -> EmulatedDeviceNodes {
        guard let current = controller.withLock({ $0 }) else {
            throw .notBound(
                model: model.identity.name, driver: driver, seconds: 0, found: "unplugged",
                driverLoaded: EmulationError.moduleIsLoaded(driver))
        }
        return try current.waitUntilBound(driver: driver, timeout: timeout)
    }

    func unplug() throws(EmulationError) {
        controller.withLock { current in
            current?.destroy()
            current = nil
        }
    }

    func replug() throws(EmulationError) {
        try unplug()
        let fresh = try UHIDController(model, log: log, ownsLog: false, logger: logger)
        controller.withLock { $0 = fresh }
    }

    func destroy() {
        try? unplug()
        log.finish()
        log.closeFile()
    }
}
