// The emulated game controllers, by the names `haptics emulate` takes: which kernel driver binds each, over
// which transport, and how to start one.
package import Logging

/// A controller the kernel's own driver binds as if it were real: an uhid device, or a USB gadget.
package protocol EmulatedDevice: AnyObject, Sendable {
    /// Every record so far: one `output` record per report or packet the driver sent.
    func records() -> [PadRecord]
    /// Records from now on; finishes when the device is removed for good.
    func recordStream() -> AsyncStream<PadRecord>
    /// What the motors run at after the last report.
    var motors: EmulatedMotorOutput { get }
    /// Waits until the driver has bound the device and its force-feedback node exists.
    func waitUntilBound(timeout: Double) throws(EmulationError) -> EmulatedDeviceNodes
    /// Removes the device, as pulling its cable (or its Bluetooth link) would; clients see `ENODEV`.
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

    /// What the real controller is.
    package var product: String {
        switch self {
        case .dualsense: "Sony DualSense (054c:0ce6)"
        case .dualsenseBluetooth: "Sony DualSense over Bluetooth (054c:0ce6)"
        case .dualshock4: "Sony DualShock 4, second generation (054c:09cc)"
        case .dualshock4Bluetooth: "Sony DualShock 4 over Bluetooth (054c:09cc)"
        case .xboxOneBluetooth: "Xbox Wireless Controller over Bluetooth (045e:\(hex(XboxWirelessController.productID)))"
        case .switchPro: "Nintendo Switch Pro Controller, wired (057e:2009)"
        case .xbox360: "Xbox 360 wired controller (045e:028e)"
        case .dragonrise: "DragonRise generic USB rumble pad (0079:0006)"
        }
    }

    /// The kernel module that binds it (in the 6.1 kernels the bench boots; newer kernels moved the
    /// DualShock 4 to hid-playstation).
    package var module: String {
        switch self {
        case .dualsense, .dualsenseBluetooth: "hid-playstation"
        case .dualshock4, .dualshock4Bluetooth: "hid-sony"
        case .xboxOneBluetooth: "hid-microsoft"
        case .switchPro: "hid-nintendo"
        case .xbox360: "xpad"
        case .dragonrise: "hid-dr"
        }
    }

    /// The driver's name in sysfs (`device/driver`), as `haptics probe` shows it.
    package var driver: String {
        switch self {
        case .dualsense, .dualsenseBluetooth: "playstation"
        case .dualshock4, .dualshock4Bluetooth: "sony"
        case .xboxOneBluetooth: "microsoft"
        case .switchPro: "nintendo"
        case .xbox360: "xpad"
        case .dragonrise: "dragonrise"
        }
    }

    /// How it reaches the kernel.
    package var transport: String {
        switch self {
        case .dualsense, .dualshock4, .switchPro, .dragonrise: "USB HID over uhid"
        case .dualsenseBluetooth, .dualshock4Bluetooth, .xboxOneBluetooth: "Bluetooth HID over uhid"
        case .xbox360: "USB gadget (dummy_hcd + FunctionFS)"
        }
    }

    /// The HID model behind a uhid controller; nil for the USB gadget.
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
        if let model = hidModel(name: name, uniq: uniq) {
            return try EmulatedHIDDevice(
                model: model, driver: module, recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
        }
        return try FunctionFSGadget(
            Xbox360Gadget(serialNumber: uniq ?? Xbox360Gadget.defaultSerialNumber), driver: module,
            recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
    }
}

private func hex(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 4 - digits.count) + digits
}

/// A uhid controller as an `EmulatedDevice`.
final class EmulatedHIDDevice: EmulatedDevice {
    private let controller: UHIDController
    private let driver: String

    init(model: any HIDControllerModel, driver: String, recordPath: String?, keepsRecords: Bool, logger: Logger)
        throws(EmulationError)
    {
        controller = try UHIDController(model, recordPath: recordPath, keepsRecords: keepsRecords, logger: logger)
        self.driver = driver
    }

    func records() -> [PadRecord] { controller.records() }
    func recordStream() -> AsyncStream<PadRecord> { controller.recordStream() }
    var motors: EmulatedMotorOutput { controller.motors }
    func waitUntilBound(timeout: Double) throws(EmulationError) -> EmulatedDeviceNodes {
        try controller.waitUntilBound(driver: driver, timeout: timeout)
    }
    func destroy() { controller.destroy() }
}
