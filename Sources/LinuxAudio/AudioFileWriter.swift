public import AudioRendering
internal import CSndfile
internal import LinuxSystem

/// The file formats `AudioFile.write` makes: the ones the project's sounds and tests need, all through libsndfile.
public enum AudioFileFormat: String, Sendable, CaseIterable {
    /// WAV, 16-bit integer samples.
    case wav16
    /// WAV, 32-bit float samples (lossless for what the renderer makes).
    case wavFloat
    /// AIFF, 16-bit integer samples.
    case aiff16
    /// FLAC, 16-bit.
    case flac
    /// Ogg Vorbis (lossy).
    case oggVorbis
    /// Ogg Opus (lossy; 8, 12, 16, 24 or 48 kHz only).
    case opus
    /// MP3 (MPEG-1/2 layer III, lossy).
    case mp3

    var sndfileFormat: Int32 {
        switch self {
        case .wav16: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        case .wavFloat: Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        case .aiff16: Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16)
        case .flac: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
        case .oggVorbis: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        case .opus: Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS)
        case .mp3: Int32(SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III)
        }
    }
}

extension AudioFile {
    /// The most frames handed to libsndfile in one call.
    static let writeSliceFrames = 4096

    /// Writes `clip` to `path` in `format`, replacing any file there. Samples outside -1 ... 1 are clipped by
    /// integer formats.
    public static func write(_ clip: AudioClip, to path: String, format: AudioFileFormat) throws(AudioFileError) {
        var pending: [Float]? = clip.samples
        try write(to: path, format: format, sampleRate: clip.sampleRate, channelCount: clip.channelCount) {
            defer { pending = nil }
            return pending
        }
    }

    /// Writes to `path` in `format`, replacing any file there, the interleaved samples of `channelCount` channels
    /// (1 or 2) at `sampleRate` that `nextBlock` hands over, one block after another until it returns nil: a long
    /// recording written without all of it in memory at once. Each block holds whole frames. Samples outside
    /// -1 ... 1 are clipped by integer formats. On a failure the file may hold the blocks written before it. A file
    /// the kernel makes up as it is read (`/proc`, `/sys`: `KernelMadeFiles`) is refused before it is opened.
    public static func write(
        to path: String, format: AudioFileFormat, sampleRate: Double, channelCount: Int,
        blocks nextBlock: () -> [Float]?
    ) throws(AudioFileError) {
        guard sampleRate > 0, sampleRate < Double(Int32.max), channelCount == 1 || channelCount == 2 else {
            throw AudioFileError(
                path: path,
                reason: "cannot write \(channelCount) channels at \(sampleRate) Hz: 1 or 2 channels, "
                    + "at a positive rate")
        }
        // A file the kernel makes up takes what is written as an order to it (`/proc/sys/vm/drop_caches`).
        if let refusal = KernelMadeFiles.refusal(ofPath: path) { throw AudioFileError(path: path, reason: refusal) }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate.rounded())
        info.channels = Int32(channelCount)
        info.format = format.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError(
                path: path,
                reason: "libsndfile cannot write \(format.rawValue) at \(info.samplerate) Hz, \(info.channels) channels"
            )
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(path: path, reason: String(cString: sf_strerror(nil)))
        }
        var failure: String?
        while failure == nil, let block = nextBlock() {
            guard block.count % channelCount == 0 else {
                failure = "a block of \(block.count) samples is not a whole number of \(channelCount)-channel frames"
                break
            }
            // Handed over in slices: libvorbis copies the whole of its first buffer onto the stack, and a block
            // of a minute overflows it.
            block.withUnsafeBufferPointer { samples in
                guard let base = samples.baseAddress else { return }
                var start = 0
                while failure == nil, start < samples.count {
                    let count = min(samples.count - start, writeSliceFrames * channelCount)
                    let frames = sf_count_t(count / channelCount)
                    if sf_writef_float(file, base + start, frames) != frames {
                        failure = "writing failed: \(String(cString: sf_strerror(file)))"
                    }
                    start += count
                }
            }
        }
        let closed = sf_close(file)
        if let failure { throw AudioFileError(path: path, reason: failure) }
        guard closed == 0 else {
            throw AudioFileError(path: path, reason: "closing failed: \(String(cString: sf_error_number(closed)))")
        }
    }
}
