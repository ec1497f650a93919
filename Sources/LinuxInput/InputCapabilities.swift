// What an input device can do: its event-code bitmaps, decoded into force-feedback capabilities and
// into udev's joystick judgement. The bitmaps come from libevdev (an open node) or from sysfs (when
// the node cannot be opened, sysfs still tells what the device is).
internal import CLibevdev
@_spi(Internals) import LinuxSystem

/// A set of event codes of one type, stored as the kernel's bitmap.
struct EventCodeSet: Hashable, Sendable {
    private(set) var words: [UInt64]

    init() { words = [] }

    init(_ codes: some Sequence<UInt16>) {
        self.init()
        for code in codes { insert(code) }
    }

    /// Parses a sysfs capability attribute (`capabilities/key`, `properties`...): hex words of the
    /// kernel's `unsigned long`, most significant first, separated by spaces ("120013 0 0 fffffffe").
    init(sysfsBitmap text: String) {
        self.init()
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).reversed()
        // sysfs prints words of the kernel's `long`, which is our `Int` on the same architecture.
        let wordBits = UInt.bitWidth
        for (index, field) in fields.enumerated() {
            guard let word = UInt64(field, radix: 16) else { continue }
            for bit in 0..<wordBits where word & (1 << UInt64(bit)) != 0 {
                insert(UInt16(index * wordBits + bit))
            }
        }
    }

    mutating func insert(_ code: UInt16) {
        let word = Int(code) / UInt64.bitWidth
        if words.count <= word { words.append(contentsOf: repeatElement(0, count: word + 1 - words.count)) }
        words[word] |= 1 << UInt64(Int(code) % UInt64.bitWidth)
    }

    func contains(_ code: UInt16) -> Bool {
        let word = Int(code) / UInt64.bitWidth
        return word < words.count && words[word] & (1 << UInt64(Int(code) % UInt64.bitWidth)) != 0
    }

    func contains(_ code: Int32) -> Bool { contains(UInt16(truncatingIfNeeded: code)) }

    /// How many codes of `range` are in the set.
    func count(in range: ClosedRange<Int32>) -> Int { range.filter { contains($0) }.count }

    var codes: [UInt16] {
        words.indices.flatMap { word in
            (0..<UInt64.bitWidth).compactMap { bit in
                words[word] & (1 << UInt64(bit)) != 0 ? UInt16(word * UInt64.bitWidth + bit) : nil
            }
        }
    }

    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.codes == rhs.codes }
    func hash(into hasher: inout Hasher) { hasher.combine(codes) }
}

/// The capability bitmaps of a device, the same the kernel exposes through `EVIOCGBIT` and sysfs.
struct CapabilityBits: Hashable, Sendable {
    var events = EventCodeSet()
    var keys = EventCodeSet()
    var absoluteAxes = EventCodeSet()
    var relativeAxes = EventCodeSet()
    var forceFeedback = EventCodeSet()
    var properties = EventCodeSet()

    init(
        events: EventCodeSet = EventCodeSet(), keys: EventCodeSet = EventCodeSet(),
        absoluteAxes: EventCodeSet = EventCodeSet(), relativeAxes: EventCodeSet = EventCodeSet(),
        forceFeedback: EventCodeSet = EventCodeSet(), properties: EventCodeSet = EventCodeSet()
    ) {
        self.events = events
        self.keys = keys
        self.absoluteAxes = absoluteAxes
        self.relativeAxes = relativeAxes
        self.forceFeedback = forceFeedback
        self.properties = properties
    }

    /// Reads the bitmaps libevdev holds for `evdev` (from `libevdev_new_from_fd`, or built in memory).
    init(evdev: OpaquePointer) {
        func codes(_ type: Int32, max: Int32) -> EventCodeSet {
            EventCodeSet(
                (0...max).lazy.filter { libevdev_has_event_code(evdev, UInt32(type), UInt32($0)) != 0 }
                    .map { UInt16($0) })
        }
        events = EventCodeSet(
            (0...EV_MAX).lazy.filter { libevdev_has_event_type(evdev, UInt32($0)) != 0 }
                .map { UInt16($0) })
        keys = codes(EV_KEY, max: KEY_MAX)
        absoluteAxes = codes(EV_ABS, max: ABS_MAX)
        relativeAxes = codes(EV_REL, max: REL_MAX)
        forceFeedback = codes(EV_FF, max: FF_MAX)
        properties = EventCodeSet(
            (0...INPUT_PROP_MAX).lazy.filter { libevdev_has_property(evdev, UInt32($0)) != 0 }
                .map { UInt16($0) })
    }

    /// Reads the bitmaps from the sysfs attributes of an `inputN` device; `attribute` returns the text
    /// of `capabilities/ev`, `capabilities/key`... or nil.
    init(sysfsAttribute attribute: (String) -> String?) {
        func bitmap(_ name: String) -> EventCodeSet { EventCodeSet(sysfsBitmap: attribute(name) ?? "") }
        events = bitmap("capabilities/ev")
        keys = bitmap("capabilities/key")
        absoluteAxes = bitmap("capabilities/abs")
        relativeAxes = bitmap("capabilities/rel")
        forceFeedback = bitmap("capabilities/ff")
        properties = bitmap("properties")
    }
}

/// What a device offers for force feedback.
public struct ForceFeedbackCapabilities: Hashable, Sendable {
    /// Effect types (`rumble`, `periodic`, `constant`, `spring`...), in kernel code order.
    public var effects: [ForceFeedbackFeature]
    /// Periodic waveforms (`sine`, `square`, `saw_up`...), in kernel code order.
    public var waveforms: [ForceFeedbackFeature]
    /// The device accepts `FF_GAIN`.
    public var gain: Bool
    /// The device accepts `FF_AUTOCENTER`.
    public var autocenter: Bool
    /// Effect slots (`EVIOCGEFFECTS`); nil when the node could not be opened to ask, or a listing described it
    /// without opening it.
    public var maxEffects: Int?

    public init(
        effects: [ForceFeedbackFeature] = [], waveforms: [ForceFeedbackFeature] = [], gain: Bool = false,
        autocenter: Bool = false, maxEffects: Int? = nil
    ) {
        self.effects = effects
        self.waveforms = waveforms
        self.gain = gain
        self.autocenter = autocenter
        self.maxEffects = maxEffects
    }

    init(bits: EventCodeSet, maxEffects: Int?) {
        let features = bits.codes.compactMap(ForceFeedbackFeature.init(rawValue:))
        self.init(
            effects: features.filter(\.isEffectType), waveforms: features.filter(\.isWaveform),
            gain: features.contains(.gain), autocenter: features.contains(.autocenter), maxEffects: maxEffects)
    }

    /// Any force feedback at all.
    public var isAvailable: Bool { !effects.isEmpty }

    /// The device can drive its motors with what our renderer sends: `FF_RUMBLE`, or `FF_PERIODIC`
    /// (whose magnitude a rumble-only driver's ff-memless turns into rumble).
    public var isRumbleCapable: Bool { effects.contains(.rumble) || effects.contains(.periodic) }

    /// The device plays periodic effects itself: a force-feedback wheel or joystick (a USB PID device through
    /// hid-pidff, an I-Force stick) that runs waveform, envelope and length on its own clock, and whose force moves
    /// the controls in the user's hands. Told by `FF_PERIODIC` beside a force effect (`FF_CONSTANT`, `FF_RAMP` or a
    /// condition: spring, damper, friction, inertia), which only such devices have. `FF_RUMBLE` says nothing
    /// either way: a rumble pad's ff-memless declares it and emulates `FF_PERIODIC` as rumble, and the input core
    /// declares it on every device with `FF_PERIODIC`, emulating rumble as a 50 ms sine; no ff-memless driver
    /// offers a force effect beside rumble.
    public var runsWaveformsItself: Bool {
        effects.contains(.periodic) && effects.contains { Self.forceEffects.contains($0) }
    }

    /// The effect types of a device whose force moves its controls (a wheel's constant pull, a stick's spring).
    static let forceEffects: Set<ForceFeedbackFeature> = [.constant, .ramp, .spring, .damper, .friction, .inertia]
}

/// The capabilities of one event node.
public struct InputDeviceCapabilities: Hashable, Sendable {
    public var forceFeedback: ForceFeedbackCapabilities
    /// Judged from keys and axes the way udev's `input_id` builtin sets `ID_INPUT_JOYSTICK`.
    public var looksLikeJoystick: Bool

    let bits: CapabilityBits

    init(bits: CapabilityBits, maxEffects: Int?) {
        self.bits = bits
        forceFeedback = ForceFeedbackCapabilities(bits: bits.forceFeedback, maxEffects: maxEffects)
        looksLikeJoystick = JoystickJudgement.isJoystick(bits)
    }

    /// Decodes the capabilities of a libevdev handle; tests build such handles in memory with
    /// `libevdev_new` and `libevdev_enable_event_code`.
    init(evdev: OpaquePointer, maxEffects: Int?) {
        self.init(bits: CapabilityBits(evdev: evdev), maxEffects: maxEffects)
    }
}

/// udev's `input_id` judgement of "joystick", for systems where no udev daemon has set
/// `ID_INPUT_JOYSTICK`. It follows systemd's rules (udev-builtin-input_id.c, `test_pointers`): a device is
/// first tested for being an accelerometer, tablet, touchpad, absolute mouse or touchscreen; only
/// otherwise do joystick buttons or axes make it a joystick, and a keyboard with a few stray joystick
/// buttons is not one.
enum JoystickJudgement {
    /// Keys from different key groups that a keyboard has and a joystick rarely more than one of
    /// (systemd's "well-known keyboard keys").
    static let keyboardMarkers: [Int32] = [
        KEY_LEFTCTRL, KEY_CAPSLOCK, KEY_NUMLOCK, KEY_INSERT, KEY_MUTE, KEY_CALC, KEY_FILE, KEY_MAIL,
        KEY_PLAYPAUSE, KEY_BRIGHTNESSDOWN,
    ]
    /// From this many keyboard markers on, the device is a keyboard whatever its joystick buttons.
    static let keyboardMarkerThreshold = 4
    /// A joystick has at least this many joystick buttons and axes together.
    static let minimumJoystickControls = 2

    static func isJoystick(_ bits: CapabilityBits) -> Bool {
        let keys = bits.keys
        let abs = bits.absoluteAxes
        let hasKeys = bits.events.contains(EV_KEY)
        let hasAbsoluteXY = abs.contains(ABS_X) && abs.contains(ABS_Y)
        let isAccelerometer =
            bits.properties.contains(INPUT_PROP_ACCELEROMETER) || (!hasKeys && hasAbsoluteXY && abs.contains(ABS_Z))
        if isAccelerometer { return false }

        let hasStylusOrPen = keys.contains(BTN_STYLUS) || keys.contains(BTN_TOOL_PEN)
        let fingerButNoPen = keys.contains(BTN_TOOL_FINGER) && !keys.contains(BTN_TOOL_PEN)
        let isDirect = bits.properties.contains(INPUT_PROP_DIRECT)
        let hasMouseButton = keys.count(in: BTN_MOUSE...(BTN_JOYSTICK - 1)) > 0
        let hasTouch = keys.contains(BTN_TOUCH)

        // A mouse with more than 16 buttons runs into the joystick range; its buttons do not count.
        var joystickButtons = 0
        if !keys.contains(BTN_JOYSTICK - 1) {
            joystickButtons =
                keys.count(in: BTN_JOYSTICK...(BTN_DIGI - 1))
                + keys.count(in: BTN_TRIGGER_HAPPY1...BTN_TRIGGER_HAPPY40)
                + keys.count(in: BTN_DPAD_UP...BTN_DPAD_RIGHT)
        }
        let joystickAxes = abs.count(in: ABS_RX...(ABS_PRESSURE - 1))
        guard joystickButtons + joystickAxes > 0 else { return false }

        if hasAbsoluteXY {
            // Earlier classes win: tablet, touchpad, absolute mouse (VMware's), touchscreen.
            if hasStylusOrPen || (fingerButNoPen && !isDirect) || hasMouseButton || hasTouch || isDirect {
                return false
            }
        }

        let keyboardMarkerCount = hasKeys ? keyboardMarkers.filter { keys.contains($0) }.count : 0
        if keyboardMarkerCount >= keyboardMarkerThreshold || joystickButtons + joystickAxes < minimumJoystickControls {
            return false
        }
        // Tablet pads have numbered buttons and a wheel; they are not joysticks either.
        let hasPadButtons = keys.contains(BTN_0) && keys.contains(BTN_1) && !keys.contains(BTN_TOOL_PEN)
        let hasWheel =
            bits.events.contains(EV_REL)
            && (bits.relativeAxes.contains(REL_WHEEL) || bits.relativeAxes.contains(REL_HWHEEL))
        if hasWheel && hasPadButtons { return false }
        return true
    }
}

/// What libevdev reads from an open node with its ioctls (`EVIOCGBIT`, `EVIOCGID`, `EVIOCGNAME`...):
/// no events are read and the device is not grabbed.
struct EvdevSnapshot: Sendable {
    var bits: CapabilityBits
    var name: String
    var uniq: String
    var phys: String
    var bus: InputBus
    var vendor: UInt16
    var product: UInt16
    var version: UInt16

    init(fileDescriptor fd: Int32) throws(SystemCallError) {
        var handle: OpaquePointer?
        var result: Int32
        // libevdev's own ioctls do not retry an interrupted call; the whole read is made again.
        repeat {
            result =
                SyscallFaults.injected(at: { "libevdev_new_from_fd" }).map { -$0.rawValue }
                ?? libevdev_new_from_fd(fd, &handle)
        } while result == -Errno.interrupted.rawValue
        guard result == 0, let handle else {
            // libevdev returns a negative errno.
            throw SystemCallError(Errno(rawValue: -result), call: "libevdev_new_from_fd")
        }
        defer { libevdev_free(handle) }
        self.init(evdev: handle)
    }

    init(evdev handle: OpaquePointer) {
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        bits = CapabilityBits(evdev: handle)
        name = text(libevdev_get_name(handle))
        uniq = text(libevdev_get_uniq(handle))
        phys = text(libevdev_get_phys(handle))
        bus = InputBus(rawValue: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(handle)))
        vendor = UInt16(truncatingIfNeeded: libevdev_get_id_vendor(handle))
        product = UInt16(truncatingIfNeeded: libevdev_get_id_product(handle))
        version = UInt16(truncatingIfNeeded: libevdev_get_id_version(handle))
    }
}
