import CLibevdev
import Testing
@testable import LinuxInput

/// A device built in memory with libevdev (no kernel), the way libevdev's own library tests do.
private struct EvdevFixture {
    var name = "fixture"
    var bus: Int32 = 0x03
    var keys: [Int32] = []
    var absoluteAxes: [Int32] = []
    var relativeAxes: [Int32] = []
    var forceFeedback: [Int32] = []
    var properties: [Int32] = []

    /// Runs `body` on a libevdev handle holding exactly these codes, then frees it.
    func withHandle<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        let handle = try #require(libevdev_new())
        defer { libevdev_free(handle) }
        libevdev_set_name(handle, name)
        libevdev_set_id_bustype(handle, bus)
        libevdev_set_id_vendor(handle, 0x054c)
        libevdev_set_id_product(handle, 0x0ce6)
        for key in keys { libevdev_enable_event_code(handle, UInt32(EV_KEY), UInt32(key), nil) }
        for axis in absoluteAxes {
            var info = input_absinfo(value: 0, minimum: -32768, maximum: 32767, fuzz: 0, flat: 0, resolution: 0)
            libevdev_enable_event_code(handle, UInt32(EV_ABS), UInt32(axis), &info)
        }
        for axis in relativeAxes { libevdev_enable_event_code(handle, UInt32(EV_REL), UInt32(axis), nil) }
        for code in forceFeedback { libevdev_enable_event_code(handle, UInt32(EV_FF), UInt32(code), nil) }
        for property in properties { libevdev_enable_property(handle, UInt32(property)) }
        return try body(handle)
    }

    func capabilities(maxEffects: Int? = 16) throws -> InputDeviceCapabilities {
        try withHandle { InputDeviceCapabilities(evdev: $0, maxEffects: maxEffects) }
    }

    // Shapes of real devices, from their drivers' capability sets.
    static let memlessGamepad = EvdevFixture(
        name: "Gamepad",
        keys: [BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_SELECT, BTN_START, BTN_MODE],
        absoluteAxes: [ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ, ABS_HAT0X, ABS_HAT0Y],
        forceFeedback: [FF_RUMBLE, FF_PERIODIC, FF_SQUARE, FF_TRIANGLE, FF_SINE, FF_GAIN])
    static let wheel = EvdevFixture(
        name: "Wheel", keys: [BTN_TRIGGER, BTN_THUMB, BTN_TOP], absoluteAxes: [ABS_X, ABS_GAS, ABS_BRAKE],
        forceFeedback: [
            FF_CONSTANT, FF_PERIODIC, FF_SINE, FF_SAW_UP, FF_SAW_DOWN, FF_SPRING, FF_DAMPER, FF_GAIN, FF_AUTOCENTER,
        ])
    /// The first 32 key codes (ESC, digits, Q...D) make udev call a device a full keyboard.
    static let keyboard = EvdevFixture(name: "AT Translated Set 2 keyboard", bus: 0x11, keys: Array(1...120))
    static let mouse = EvdevFixture(
        name: "Mouse", keys: [BTN_LEFT, BTN_RIGHT, BTN_MIDDLE], relativeAxes: [REL_X, REL_Y, REL_WHEEL])
    static let touchpad = EvdevFixture(
        name: "Touchpad", keys: [BTN_LEFT, BTN_TOOL_FINGER, BTN_TOUCH],
        absoluteAxes: [ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y])
    static let motionSensors = EvdevFixture(
        name: "Motion Sensors", absoluteAxes: [ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ],
        properties: [INPUT_PROP_ACCELEROMETER])
}

@Suite struct CapabilityDecodingTests {
    @Test func memlessGamepadDecodesRumblePeriodicAndGain() throws {
        let capabilities = try EvdevFixture.memlessGamepad.capabilities(maxEffects: 16)
        let ff = capabilities.forceFeedback
        #expect(ff.effects == [.rumble, .periodic])
        #expect(ff.waveforms == [.square, .triangle, .sine])
        #expect(ff.gain)
        #expect(!ff.autocenter)
        #expect(ff.maxEffects == 16)
        #expect(ff.isRumbleCapable)
        #expect(capabilities.looksLikeJoystick)
    }

    @Test func wheelDecodesConditionEffectsAndAutocenter() throws {
        let capabilities = try EvdevFixture.wheel.capabilities(maxEffects: nil)
        let ff = capabilities.forceFeedback
        #expect(ff.effects == [.periodic, .constant, .spring, .damper])
        #expect(ff.waveforms == [.sine, .sawUp, .sawDown])
        #expect(ff.gain && ff.autocenter)
        #expect(ff.maxEffects == nil)
        #expect(ff.isRumbleCapable, "periodic alone drives motors")
        #expect(capabilities.looksLikeJoystick)
    }

    @Test func deviceWithoutForceFeedbackHasNone() throws {
        let ff = try EvdevFixture.keyboard.capabilities(maxEffects: 0).forceFeedback
        #expect(!ff.isAvailable)
        #expect(!ff.isRumbleCapable)
        #expect(ff.effects.isEmpty && ff.waveforms.isEmpty && !ff.gain)
    }

    @Test(arguments: [
        (EvdevFixture.keyboard, false), (EvdevFixture.mouse, false), (EvdevFixture.touchpad, false),
        (EvdevFixture.motionSensors, false), (EvdevFixture.memlessGamepad, true), (EvdevFixture.wheel, true),
    ])
    fileprivate func joystickJudgementFollowsUdev(fixture: EvdevFixture, isJoystick: Bool) throws {
        #expect(try fixture.capabilities().looksLikeJoystick == isJoystick, "\(fixture.name)")
    }

    @Test func keyboardWithStrayJoystickButtonsIsNotAJoystick() throws {
        let keyboard = EvdevFixture(
            keys: [KEY_LEFTCTRL, KEY_CAPSLOCK, KEY_NUMLOCK, KEY_INSERT, BTN_TRIGGER, BTN_THUMB])
        #expect(try !keyboard.capabilities().looksLikeJoystick)
        let threeMarkers = EvdevFixture(keys: [KEY_LEFTCTRL, KEY_CAPSLOCK, KEY_NUMLOCK, BTN_TRIGGER, BTN_THUMB])
        #expect(try threeMarkers.capabilities().looksLikeJoystick)
    }

    @Test func aSingleJoystickControlIsNotEnough() throws {
        #expect(try !EvdevFixture(keys: [BTN_TRIGGER]).capabilities().looksLikeJoystick)
        #expect(try EvdevFixture(keys: [BTN_TRIGGER], absoluteAxes: [ABS_RX]).capabilities().looksLikeJoystick)
        // Pedals: no buttons, only "fancy" axes.
        #expect(try EvdevFixture(absoluteAxes: [ABS_GAS, ABS_BRAKE]).capabilities().looksLikeJoystick)
    }

    @Test func mouseWithManyButtonsRunningIntoTheJoystickRangeIsNotAJoystick() throws {
        // BTN_JOYSTICK - 1 set means the buttons above it are a mouse's 17th and on.
        let mouse = EvdevFixture(
            keys: [BTN_LEFT, BTN_JOYSTICK - 1, BTN_JOYSTICK, BTN_JOYSTICK + 1], relativeAxes: [REL_X, REL_Y])
        #expect(try !mouse.capabilities().looksLikeJoystick)
    }

    @Test func snapshotReadsIdentityFromTheHandle() throws {
        let snapshot = try EvdevFixture.memlessGamepad.withHandle { EvdevSnapshot(evdev: $0) }
        #expect(snapshot.name == "Gamepad")
        #expect(snapshot.bus == .usb)
        #expect(snapshot.vendor == 0x054c && snapshot.product == 0x0ce6)
        #expect(snapshot.bits.forceFeedback.codes == [0x50, 0x51, 0x58, 0x59, 0x5a, 0x60])
    }

    @Test func featureNamesAgreeWithLibevdev() throws {
        for feature in ForceFeedbackFeature.allCases {
            let name = try #require(libevdev_event_code_get_name(UInt32(EV_FF), UInt32(feature.rawValue)))
            var kernelName = String(cString: name).lowercased()
            kernelName.removeFirst("ff_".count)
            #expect(kernelName == feature.name)
        }
    }
}

@Suite struct SysfsBitmapTests {
    @Test func wordsAreMostSignificantFirst() {
        // A keyboard's capabilities/ev: SYN, KEY, MSC, LED, REP.
        #expect(EventCodeSet(sysfsBitmap: "120013\n").codes == [0, 1, 4, 17, 20])
        // Bit 0 of the second 64-bit word is code 64.
        #expect(EventCodeSet(sysfsBitmap: "1 0").codes == [64])
        #expect(EventCodeSet(sysfsBitmap: "").isEmpty)
        #expect(EventCodeSet(sysfsBitmap: "0").isEmpty)
    }

    @Test func sysfsAndLibevdevGiveTheSameBits() throws {
        // capabilities/ff of a memless rumble pad as sysfs prints it: codes 0x50...0x60 are in the second word.
        let sysfs = CapabilityBits { attribute in
            switch attribute {
            case "capabilities/ff": "107030000 0"
            default: nil
            }
        }
        let evdev = try EvdevFixture.memlessGamepad.withHandle { CapabilityBits(evdev: $0) }
        #expect(sysfs.forceFeedback == evdev.forceFeedback)
    }
}
