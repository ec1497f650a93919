public import AudioRendering
internal import CSamplerate
internal import CSndfile
internal import Glibc
@_spi(Internals) internal import LinuxSystem

/// Audio files decoded with libsndfile (WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3, and the other formats it reads)
/// into `AudioClip`s, and converted to an output's rate with libsamplerate.
public enum AudioFile {
    /// The most samples a clip decoded or converted whole may hold: 10 minutes of 48 kHz stereo, 57.6 million
    /// floats (230 MB). Counted in samples, not seconds, so that a file of many channels or a high rate, or a
    /// conversion up to a higher rate, cannot take more memory than that; a larger file is refused rather than
    /// read into memory (music that long plays through `AudioFileStream`).
    public static let mostSamples = 600 * 48000 * 2

    /// Samples read from the file at a time (65,536 stereo frames; fewer frames of a file of more channels): only
    /// the first two channels of each block are kept, so a file of many channels never sits in memory whole, and
    /// the block stays 512 KB whatever the file claims (1,024 channels made it 256 MB, until 6 December).
    static let blockSamples = 131_072

    /// The frames of `channels` channels a block holds (at least one).
    static func blockFrames(channels: Int) -> Int { max(1, blockSamples / channels) }

    /// The file at `path` decoded to floats. Integer formats decode within -1 ... 1; a float file's samples are
    /// kept as they are (the mix clips), but for a NaN, which becomes silence, and an infinity, which becomes full
    /// scale. A file of more than two channels keeps its first two (front left and right in every layout
    /// libsndfile reads).
    public static func decode(_ path: String) throws(AudioFileError) -> AudioClip {
        var info = SF_INFO()
        let (file, fd) = try open(path, &info)
        defer {
            sf_close(file)
            Sys.close(fd)
        }
        let channels = Int(info.channels)
        guard info.samplerate > 0, channels > 0 else {
            throw AudioFileError(
                path: path, reason: "the file has no audio (\(channels) channels at \(info.samplerate) Hz)")
        }
        let kept = min(channels, 2)
        let tooLarge = AudioFileError(path: path, reason: "the file holds more than \(tooLargeForMemory)")
        guard Double(info.frames) * Double(kept) <= Double(mostSamples) else { throw tooLarge }
        var samples = [Float]()
        samples.reserveCapacity(max(Int(info.frames), 0) * kept)
        let blockFrames = Self.blockFrames(channels: channels)
        var block = [Float](repeating: 0, count: blockFrames * channels)
        while true {
            let read = block.withUnsafeMutableBufferPointer {
                sf_readf_float(file, $0.baseAddress, sf_count_t(blockFrames))
            }
            guard read >= 0, sf_error(file) == 0 else {
                throw AudioFileError(path: path, reason: "reading failed: \(String(cString: sf_strerror(file)))")
            }
            guard read > 0 else { break }
            guard samples.count + Int(read) * kept <= mostSamples else { throw tooLarge }
            for frame in 0..<Int(read) {
                for channel in 0..<kept { samples.append(block[frame * channels + channel].finiteSample) }
            }
        }
        guard let clip = AudioClip(sampleRate: Double(info.samplerate), channelCount: kept, samples: samples) else {
            throw AudioFileError(path: path, reason: "the decoded audio does not make a clip")
        }
        return clip
    }

    /// The regular file at `path` opened for libsndfile to read, and its descriptor, which the caller closes after
    /// `sf_close` (libsndfile is told not to). Whatever a pattern names, only a regular file is opened
    /// (`DocumentFile.open`): a FIFO (which an `open` for reading would wait on until a writer came, with nothing to
    /// interrupt it), a device (which is never opened: opening one may act), a socket or a directory is refused; and
    /// so is a file the kernel makes up as it is read (`KernelMadeFiles`), which libsndfile took for a sound in a
    /// format it did not recognise.
    static func open(_ path: String, _ info: inout SF_INFO) throws(AudioFileError) -> (file: OpaquePointer, fd: Int32) {
        let fd: Int32
        switch DocumentFile.open(path) {
        case .success(let opened): fd = opened
        case .failure(let refusal): throw AudioFileError(path: path, reason: refusal.reason)
        }
        guard let file = sf_open_fd(fd, Int32(SFM_READ), &info, 0) else {
            Sys.close(fd)
            throw AudioFileError(path: path, reason: String(cString: sf_strerror(nil)))
        }
        return (file, fd)
    }

    /// How `mostSamples` reads in a refusal.
    static let tooLargeForMemory =
        "\(mostSamples) samples (10 minutes of 48 kHz stereo), the most decoded whole"

    /// The file at `path` decoded and converted to `sampleRate` (as `decode`, then `resample`).
    public static func load(_ path: String, sampleRate: Int) throws(AudioFileError) -> AudioClip {
        let clip = try decode(path)
        do {
            return try resample(clip, to: sampleRate)
        } catch {
            throw AudioFileError(path: path, reason: error.reason)
        }
    }

    /// The converter: libsamplerate's medium-quality sinc (band-limited, 97 dB signal-to-noise), fast enough
    /// to convert a short effect in well under its own length.
    static let converter = Int32(SRC_SINC_MEDIUM_QUALITY)

    /// Whether libsamplerate converts `rate` to `target` (or they are the same): it takes ratios within 1/256 ...
    /// 256 (`src_is_valid_ratio`). Checked before a conversion allocates its output, which for a file at 1 Hz
    /// made for 48 kHz was 230 MB before libsamplerate refused it; and before a stream opens, which played such a
    /// file as silence.
    static func canConvert(from rate: Double, to target: Int) -> Bool {
        rate == Double(target) || (rate > 0 && target > 0 && src_is_valid_ratio(Double(target) / rate) != 0)
    }

    /// Why a conversion `canConvert` refuses is refused.
    static let convertibleRatios = ": libsamplerate converts between rates at most 256 times apart"

    /// `clip` at `sampleRate` (the clip itself when it is at that rate already).
    public static func resample(_ clip: AudioClip, to sampleRate: Int) throws(ResamplingError) -> AudioClip {
        guard sampleRate > 0 else { throw ResamplingError(reason: "the target rate \(sampleRate) Hz is not positive") }
        if clip.sampleRate == Double(sampleRate) || clip.frameCount == 0 {
            return AudioClip(sampleRate: Double(sampleRate), channelCount: clip.channelCount, samples: clip.samples)
                ?? clip
        }
        guard canConvert(from: clip.sampleRate, to: sampleRate) else {
            throw ResamplingError(
                reason: "cannot convert \(clip.sampleRate) Hz to \(sampleRate) Hz\(convertibleRatios)")
        }
        let ratio = Double(sampleRate) / clip.sampleRate
        let frames = (Double(clip.frameCount) * ratio).rounded(.up)
        guard frames * Double(clip.channelCount) <= Double(mostSamples) else {
            throw ResamplingError(reason: "converted to \(sampleRate) Hz it would hold more than \(tooLargeForMemory)")
        }
        let capacity = Int(frames) + 16
        var output = [Float](repeating: 0, count: capacity * clip.channelCount)
        let (status, produced) = clip.samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                var data = SRC_DATA()
                data.data_in = input.baseAddress
                data.input_frames = Int(clip.frameCount)
                data.data_out = out.baseAddress
                data.output_frames = Int(capacity)
                data.src_ratio = ratio
                data.end_of_input = 1
                let status = src_simple(&data, converter, Int32(clip.channelCount))
                return (status, Int(data.output_frames_gen))
            }
        }
        guard status == 0 else {
            throw ResamplingError(reason: "libsamplerate: \(String(cString: src_strerror(status)))")
        }
        output.removeLast(output.count - produced * clip.channelCount)
        guard
            let converted = AudioClip(sampleRate: Double(sampleRate), channelCount: clip.channelCount, samples: output)
        else { throw ResamplingError(reason: "the converted audio does not make a clip") }
        return converted
    }
}

/// A rate conversion that failed.
public struct ResamplingError: Error, Equatable, Sendable {
    public let reason: String
}
