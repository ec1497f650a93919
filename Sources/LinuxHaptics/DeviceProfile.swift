// Which render profile drives a device: chosen from the kernel driver bound to it and its identity, because
// the driver is what sets the resolution and the update rate that reach the motors (docs/rendering.md gives the
// driver code path behind each profile).
public import HapticRendering
public import LinuxInput

extension RenderProfile {
    /// Sony's USB vendor id.
    static let sonyVendor: UInt16 = 0x054c
    /// Microsoft's USB vendor id.
    static let microsoftVendor: UInt16 = 0x045e
    /// The Sixaxis / DualShock 3 product id: the one pad hid-sony drives with an on/off weak motor.
    static let dualShock3Product: UInt16 = 0x0268
    /// DualSense and DualSense Edge product ids (hid-playstation; DualShock 4 shares that driver since 6.2).
    static let dualSenseProducts: Set<UInt16> = [0x0ce6, 0x0df2]

    /// The profile for a device, from its kernel driver (sysfs `device/driver`, `InputDevice.driver`) and
    /// identity; the generic profile when neither says more.
    ///
    /// - `xpad` → xpad;
    /// - `playstation` → dualsense for a DualSense, dualshock4 otherwise (the driver took DualShock 4 in 6.2);
    /// - `sony` → dualshock3 for a Sixaxis (product 0x0268), dualshock4 otherwise;
    /// - `microsoft` or `xpadneo` on Bluetooth → xbox-bluetooth (hid-microsoft's 0...100 levels);
    /// - `nintendo` → switch (HD rumble frames every 30 ms); on a Joy-Con, alone or in the charging grip, with its
    ///   one motor: the strong one on a left Joy-Con, the weak one on a right one (`HDActuators.joyConSide`), each
    ///   playing a pattern's whole level;
    /// - anything else → generic, uinput devices included (they have no driver; a test pad that resolves more
    ///   finely is driven with `HapticEngineOptions.renderProfile = .virtualPad` by whoever knows it does);
    /// - whatever the driver, a device that plays periodic effects itself (`forceFeedback.runsWaveformsItself`: a
    ///   PID wheel or joystick) → pid.
    public static func forDevice(
        driver: String?, identity: InputDeviceIdentity, forceFeedback: ForceFeedbackCapabilities? = nil
    ) -> RenderProfile {
        if forceFeedback?.runsWaveformsItself == true { return .periodicForce }
        switch driver {
        case "xpad":
            return .xpad
        case "playstation":
            return dualSenseProducts.contains(identity.product) ? .dualSense : .dualShock4
        case "sony":
            return identity.product == dualShock3Product ? .dualShock3 : .dualShock4
        case "microsoft" where identity.bus == .bluetooth, "xpadneo" where identity.bus == .bluetooth:
            return .xboxBluetooth
        case "nintendo":
            switch HDActuators.joyConSide(identity) {
            case .left: return .switchPro.withMotors(strong: true, weak: false)
            case .right: return .switchPro.withMotors(strong: false, weak: true)
            case nil: return .switchPro
            }
        default:
            break
        }
        return .genericRumble
    }
}
