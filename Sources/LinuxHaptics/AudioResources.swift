// The audio files registered with an engine (Core Haptics' registerAudioResource): each read and decoded once,
// when it is registered, so that a bad file is said then and no player pays for decoding it; a pattern's
// AudioCustom events that name a registered resource play its clip, with its options where they say nothing.
import AHAP
import AudioRendering
import LinuxAudio
@_spi(Internals) import LinuxSystem

/// How an `AudioCustom` event playing a registered resource sounds when the event itself does not say
/// (Core Haptics' `CHHapticAudioResourceKey` options, with their defaults).
public struct AudioResourceOptions: Sendable, Hashable {
    /// Whether the sound follows the event's volume envelope (attack, decay, release), fading in and out
    /// rather than starting and ending at once (`CHHapticAudioResourceKeyUseVolumeEnvelope`, true by default).
    public var usesVolumeEnvelope: Bool
    /// Whether the file starts again from its beginning until the event's duration is over
    /// (`CHHapticAudioResourceKeyLoopEnabled`, false by default).
    public var loopEnabled: Bool

    public init(usesVolumeEnvelope: Bool = true, loopEnabled: Bool = false) {
        self.usesVolumeEnvelope = usesVolumeEnvelope
        self.loopEnabled = loopEnabled
    }
}

/// An engine's registered resources, by the identifiers it gave them.
final class AudioResources: Sendable {
    private struct Resource: Sendable {
        let options: AudioResourceOptions
        /// The file decoded at the engine's sound rate; nil on an engine that plays no sound.
        let clip: AudioClip?
    }

    private struct Registry {
        var resources: [AudioResourceID: Resource] = [:]
        /// The identifier the next registration gets: never one given before, so that a pattern made for a
        /// resource since unregistered cannot play another.
        var next: UInt = 1
    }

    private let registry = Lock(Registry())

    /// Registers the file at `path`, decoded and converted to `sampleRate` (nil: the engine plays no sound, and
    /// the file is only read to know that it can be). Throws `invalidAudioResource` for a file that cannot be
    /// read or decoded, naming why; nothing is registered then.
    func register(
        path: String, options: AudioResourceOptions, sampleRate: Int?
    ) throws(HapticEngineError) -> AudioResourceID {
        let clip: AudioClip?
        do throws(AudioFileError) {
            if let sampleRate {
                clip = try AudioFile.load(path, sampleRate: sampleRate)
            } else {
                _ = try AudioFile.decode(path)
                clip = nil
            }
        } catch {
            throw HapticEngineError(.invalidAudioResource, "the audio resource cannot be registered: \(error)")
        }
        return registry.withLock { registry in
            let id = AudioResourceID(rawValue: registry.next)
            registry.next += 1
            registry.resources[id] = Resource(options: options, clip: clip)
            return id
        }
    }

    /// Forgets `id`; players made with it play it on. Throws `invalidAudioResource` for an identifier this engine
    /// did not give or has forgotten.
    func unregister(_ id: AudioResourceID) throws(HapticEngineError) {
        guard registry.withLock({ $0.resources.removeValue(forKey: id) }) != nil else {
            throw HapticEngineError(
                .invalidAudioResource, "\(id) is not registered with this engine (never, or unregistered since)")
        }
    }

    /// `pattern` as it plays here: each `AudioCustom` event that names a registered resource takes the resource's
    /// options where it sets none; with the clips of those resources (none on an engine without sound). Throws
    /// `invalidAudioResource`, naming the event, for one that names a resource not registered.
    func resolve(
        _ pattern: HapticPattern
    ) throws(HapticEngineError) -> (pattern: HapticPattern, clips: [AudioWaveform: AudioClip]) {
        guard pattern.events.contains(where: { $0.type == .audioCustom && $0.audioResourceID != nil }) else {
            return (pattern, [:])
        }
        let resources = registry.withLock { $0.resources }
        var resolved = pattern
        var clips: [AudioWaveform: AudioClip] = [:]
        for (index, event) in pattern.events.enumerated() {
            guard case .resource(let id) = event.audioWaveform else { continue }
            guard let resource = resources[id] else {
                throw HapticEngineError(
                    .invalidAudioResource,
                    "the pattern cannot be played: events[\(index)] plays \(id), which this engine has not "
                        + "registered (or has unregistered); register its file first (registerAudioResource), or "
                        + "name the sound by its path")
            }
            resolved.events[index].waveformUsesVolumeEnvelope =
                event.waveformUsesVolumeEnvelope ?? resource.options.usesVolumeEnvelope
            resolved.events[index].waveformLoopEnabled = event.waveformLoopEnabled ?? resource.options.loopEnabled
            clips[.resource(id)] = resource.clip
        }
        return (resolved, clips)
    }
}
