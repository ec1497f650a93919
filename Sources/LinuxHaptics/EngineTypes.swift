// The engine's public vocabulary: how it is created, why it stops, what fails.
public import HapticRendering
package import LinuxAudio
public import LinuxInput
package import Logging

/// Why an engine's output stopped without `stop()` being called: Core Haptics' `StoppedReason`, with its names
/// where the meaning is the same (Core Haptics' app-suspension reason has no counterpart).
public enum HapticEngineStoppedReason: String, Sendable, Hashable, CaseIterable {
    /// The game controller was unplugged: a write failed with `ENODEV`, or the hot-plug monitor saw it go.
    case gameControllerDisconnect
    /// The device refused what the engine needs (no free slot, upload rejected, unexpected errno).
    case deviceError
    /// The engine was idle for the auto-shutdown delay and released its device; it starts again on the
    /// next play.
    case idleTimeout
    /// The engine object was released.
    case engineDestroyed
    /// A `notifyWhenPlayersFinished` handler returned `.stopEngine`.
    case notifyWhenFinished
    /// A system resource failed (the playback thread could not be created).
    case systemError
    /// The sound device the engine plays patterns' audio events on went away (unplugged, its driver unbound).
    /// The engine waits for it, as for a gamepad, and resets when it is back.
    case audioSessionInterrupt
}

/// What a failed engine or player call says.
public struct HapticEngineError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// No device matches the selection (none plugged in, or the chosen one is absent).
        case noDevice
        /// The device exists but may not be opened for writing.
        case permissionDenied
        /// The device failed or refused.
        case deviceError
        /// The engine is stopped: call `start()` first.
        case notRunning
        /// The player belongs to an output that was reset (or an engine that is gone): make a new one.
        case playerInvalidated
        /// The pattern cannot be prepared as a single pulse, or an argument is out of range.
        case invalidArgument
        case systemError
        /// The player was cancelled before it finished (passed to its completion handler).
        case cancelled
        /// An audio file that cannot be registered, or an audio resource identifier the engine has not registered
        /// (a pattern naming one, or one unregistered twice).
        case invalidAudioResource
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    init(_ failure: OutputFailure) {
        switch failure.kind {
        case .notFound: self.init(.noDevice, failure.message)
        case .deviceGone: self.init(.noDevice, failure.message)
        case .permissionDenied: self.init(.permissionDenied, failure.message)
        default: self.init(.deviceError, failure.message)
        }
    }
}

/// Where an engine sends its output: an evdev device, the built-in virtual output, or (through `package` access)
/// another output made by this package's own targets, such as the recording output of LinuxHapticsTesting.
public struct HapticOutputSelection: Sendable {
    /// Makes the output source for an engine's options.
    let makeSource: @Sendable (HapticEngineOptions) -> any OutputSource
    /// The device selection, for device outputs.
    public let deviceSelection: DeviceSelection?

    package init(source: any OutputSource) {
        self.init(makeSource: { _ in source })
    }

    private init(makeSource: @escaping @Sendable (HapticEngineOptions) -> any OutputSource) {
        self.makeSource = makeSource
        deviceSelection = nil
    }

    /// An evdev device.
    public static func device(_ selection: DeviceSelection) -> HapticOutputSelection {
        HapticOutputSelection(selection: selection)
    }

    private init(selection: DeviceSelection) {
        makeSource = { options in
            EvdevOutputSource(
                selection: selection, adoptCompatibleDevice: options.adoptCompatibleDevice,
                monitorSource: options.monitorSource, actuators: options.actuators, locality: options.locality,
                allowsForceDevices: options.allowsForceDevices, gain: options.gain,
                followsFrames: options.renderProfile == nil)
        }
        deviceSelection = selection
    }

    /// The built-in virtual output: no device, a model of the motors in this process.
    public static func virtual(_ model: VirtualOutput) -> HapticOutputSelection {
        HapticOutputSelection(makeSource: { options in VirtualOutputSource(model: model, locality: options.locality) })
    }
}

/// What `notifyWhenPlayersFinished`'s handler asks the engine to do next.
public enum HapticEngineFinishedAction: Sendable {
    case stopEngine
    case leaveEngineRunning
}

/// One primitive the playback thread sent, with the deadline it was meant for (measurements).
public struct PlaybackSample: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case apply
        case keepAlive
    }

    /// The engine time the change was scheduled for.
    public var deadline: Double
    /// The engine time just before the primitive was sent.
    public var sent: Double
    public var mix: MotorMagnitudes
    public var kind: Kind
    /// A level the playback thread slept through whole (due at `deadline`), written when it woke rather than
    /// never; the engine plans what follows again from `sent`.
    public var wokeLate = false
}

/// Which of a pad's actuators play the engine's patterns.
public enum HapticActuators: String, Sendable, Hashable, CaseIterable {
    /// `hd` where the pad has such actuators and their node may be written, else the rumble motors.
    case automatic = "auto"
    /// The pad's actuators through its hidraw node: a DualSense's voice coils (each event a carrier whose
    /// frequency follows its sharpness) or a Switch controller's HD rumble (each band's frequency from sharpness).
    /// A pad without them, or whose node may not be written, plays on its rumble motors instead, and the engine
    /// says why (`OutputCapabilities.actuatorFallback`). An Xbox pad's trigger motors are chosen by locality, and
    /// read as `.hd` in `OutputCapabilities.actuators` (they play motor levels, through the pad's hidraw node).
    case hd
    /// The rumble motors, through the kernel's force feedback, on every pad.
    case rumble
}

public struct HapticEngineOptions: Sendable {
    /// Release the device (and its slots) after this many idle seconds; the next play opens it again. nil never
    /// idles; a value that is not a positive number makes `start()` throw `invalidArgument`.
    public var autoShutdownDelay: Double?
    /// After an unplug, accept another rumble-capable gamepad in place of the device that went away.
    public var adoptCompatibleDevice = false
    /// Which motors (or, on voice coils, which actuators) play.
    public var locality: HapticLocality = .all
    /// Whether patterns play on the pad's voice coils or its rumble motors. The default is the motors: the
    /// voice-coil path follows a published report format and is tested against an emulated pad only, so it is
    /// chosen, not assumed (`.automatic` or `.hd`).
    public var actuators: HapticActuators = .rumble
    /// Also play on force-feedback wheels and joysticks: devices that run periodic effects themselves
    /// (`ForceFeedbackCapabilities.runsWaveformsItself`, USB PID devices), whose force moves the controls under
    /// the user's hands. Off by default: such a device is never "the first rumble device", and naming it alone
    /// does not open it. With it, a selection that names one (or `firstRumbleDevice` when no gamepad with rumble is
    /// there) plays each event as a periodic effect the device runs (`OutputCapabilities.playsPeriodicEffects`).
    public var allowsForceDevices = false
    /// The engine's overall strength, 0...1, applied in software (the device's `FF_GAIN` is shared with
    /// every other process using it), on the rumble motors, the voice coils, HD rumble and the trigger motors
    /// alike. Outside 0...1, or not a number, `start()` throws `invalidArgument`.
    public var gain = 1.0
    /// Where hot-plug events come from.
    public var monitorSource: DeviceMonitor.Source = .automatic
    /// The render profile the device is driven with: players are rendered with it (transient pulses, motors)
    /// and its `DeviceCommandPlanner` decides every command sent (resolution, minimum update interval), with
    /// `gain` above applied on top of the profile's. Nil (the default) chooses it from the device when the
    /// output opens (`RenderProfile.forDevice`, see docs/engine.md); set it to override that choice.
    public var renderProfile: RenderProfile?
    /// Called on the playback thread after each primitive: for measurements, keep it cheap.
    public var playbackObserver: (@Sendable (PlaybackSample) -> Void)?

    /// Play only haptics: audio events are left out and no sound device is opened (Core Haptics'
    /// `playsHapticsOnly`, here fixed when the engine is made).
    public var playsHapticsOnly = false
    /// Play only audio: the motors are not driven and no gamepad is needed (the engine plays its haptics on a
    /// virtual output, silently). Core Haptics' `playsAudioOnly`, fixed when the engine is made.
    public var playsAudioOnly = false
    /// The ALSA device audio events play on. "default" reaches the sound server (PipeWire, PulseAudio) or
    /// dmix, so the engine mixes with other programs and never takes the device; without a sound device, audio
    /// plays on a null output that keeps the same time.
    public var audioDevice = "default"
    /// The folders a relative `EventWaveformPath` is looked for in, in order (an AHAP file's own folder, then
    /// the app's resource folder). An absolute path is used as it is; a path with a `..` component is refused.
    public var audioResourceDirectories: [String] = []
    /// The output buffer audio plays through, in seconds: the sound's latency, which a pattern's start waits
    /// for so that its sound and its rumble begin together. Shorter answers faster and underruns sooner under
    /// load. Within `AudioOutputs.bufferSecondsRange` (0.001 ... 10 s): outside it, or not a number, `start()`
    /// throws `invalidArgument` (unless the engine `playsHapticsOnly`).
    public var audioBufferSeconds = 0.03
    /// Opens the engine's sound output instead of `audioDevice` (this package's tests: a recording output).
    package var audioOutputFactory: (@Sendable (Logger) throws(AudioDeviceError) -> any AudioOutput)?
    /// Told each time the engine has its sound stream play a pattern's sound: the `CLOCK_MONOTONIC` nanoseconds
    /// the sound's first frame is to be heard at, and that frame's pattern time (this package's tests).
    package var soundScheduleObserver: (@Sendable (_ startNanoseconds: UInt64, _ patternTime: Double) -> Void)?

    public init() {}
}
