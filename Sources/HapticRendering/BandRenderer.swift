// Patterns for actuators that take a frequency and an amplitude per band rather than samples: the HD rumble of
// Nintendo Switch controllers, whose linear resonant actuators each play a low band (41...626 Hz) and a high band
// (82...1253 Hz) at once. The pattern's meaning comes from the waveform renderer (the same voices, curves,
// envelopes, sharpness-to-frequency map and amplitude curve); what differs is the output: every update carries,
// per actuator, the loudest carriers split into the two bands, held by the pad until the next update.

public import AHAP

extension SharpnessFrequencyMap {
    /// HD rumble: 80 Hz to 640 Hz, three octaves around the actuators' two resonances (about 160 Hz, where the
    /// low band rests, and 320 Hz, where the high band rests), which fall at sharpness 1/3 and 2/3. Below 80 Hz a
    /// linear resonant actuator moves little; above 640 Hz vibration is hardly felt.
    public static let hdRumble = SharpnessFrequencyMap(dull: 80, sharp: 640)
}

/// One carrier: a frequency in Hz and an amplitude 0...1.
public struct Carrier: Sendable, Hashable {
    public var frequency: Double
    public var amplitude: Double

    public init(frequency: Double, amplitude: Double) {
        self.frequency = frequency
        self.amplitude = amplitude
    }
}

/// What one HD rumble actuator plays: its low band and its high band.
public struct ActuatorBands: Sendable, Hashable {
    public var low: Carrier
    public var high: Carrier

    public init(low: Carrier, high: Carrier) {
        self.low = low
        self.high = high
    }

    /// Both bands silent, at the frequencies the actuator rests at.
    public static let rest = ActuatorBands(
        low: Carrier(frequency: 160, amplitude: 0), high: Carrier(frequency: 320, amplitude: 0))

    public var isSilent: Bool { low.amplitude == 0 && high.amplitude == 0 }

    /// The bands that carry `carriers` (every voice sounding on this actuator, from every player):
    /// - a carrier below `crossover` goes to the low band, the others to the high band, so two voices of
    ///   different sharpness are both felt, each at its own frequency;
    /// - carriers sharing a band add as independent vibrations do, by energy (the square root of the sum of
    ///   squared amplitudes), at the loudest one's frequency;
    /// - when the two bands together would pass full amplitude, both are scaled down to sum to it, so the
    ///   actuator is never driven past what one band may take.
    public static func mixing(_ carriers: [Carrier], crossover: Double) -> ActuatorBands {
        func band(_ members: [Carrier], rest: Carrier) -> Carrier {
            guard let loudest = members.max(by: { $0.amplitude < $1.amplitude }), loudest.amplitude > 0 else {
                return rest
            }
            let energy = members.reduce(0) { $0 + $1.amplitude * $1.amplitude }
            return Carrier(frequency: loudest.frequency, amplitude: Swift.min(1, energy.squareRoot()))
        }
        let sounding = carriers.filter { $0.amplitude > 0 && $0.amplitude.isFinite && $0.frequency.isFinite }
        var low = band(sounding.filter { $0.frequency < crossover }, rest: rest.low)
        var high = band(sounding.filter { $0.frequency >= crossover }, rest: rest.high)
        let total = low.amplitude + high.amplitude
        if total > 1 {
            low.amplitude /= total
            high.amplitude /= total
        }
        return ActuatorBands(low: low, high: high)
    }
}

/// A pattern as HD rumble: per update, each actuator's carriers over the time the update covers.
public struct BandRenderer: Sendable {
    /// The waveform renderer that says what sounds when: at `sampleRate`, with the HD rumble's map.
    public let waveform: WaveformRenderer

    /// Frames per second of the underlying waveform clock: high enough that the sharpest carrier (640 Hz) is
    /// not capped (`WaveformRenderer.samplesPerCycleAtLeast`), and a whole number of frames per millisecond.
    public static let sampleRate = 3000.0
    /// The frames between two looks at the carriers within an update: one millisecond, so a transient's burst
    /// (two cycles, 3 ms at 640 Hz) is never stepped over.
    public static let framesPerLook = 3

    /// The crossover between the bands: the geometric middle of the map (sharpness 0.5, 226 Hz), between the
    /// two resonances.
    public var crossover: Double { waveform.frequencies.frequency(sharpness: 0.5) }

    public init(
        pattern: HapticPattern, controls: RuntimeControls = .none, playbackRate: Double = 1,
        locality: HapticLocality = .all, frequencies: SharpnessFrequencyMap = .hdRumble
    ) {
        waveform = WaveformRenderer(
            pattern: pattern, controls: controls, sampleRate: Self.sampleRate, playbackRate: playbackRate,
            locality: locality, frequencies: frequencies)
    }

    /// Frames of the waveform clock per second of pattern time.
    public var framesPerPatternSecond: Double { waveform.framesPerPatternSecond }
    /// The first frame from which nothing sounds.
    public var endFrame: Int { waveform.endFrame }

    /// Every voice sounding in `count` frames from `frame`, each at its loudest there (a transient's burst is
    /// held for the whole update rather than missed), for the left and right actuators as the locality places
    /// them.
    public func carriers(from frame: Int, count: Int) -> (left: [Carrier], right: [Carrier]) {
        let end = WaveformRenderer.frame(Swift.max(count, 1), after: frame)
        var found: [Carrier] = []
        // The voices begun before `end` and not all ended by `frame`, found by two binary searches over the
        // voices in start order (the latest end so far rises along it): a look costs the voices near the update,
        // not the whole pattern. Taken in pattern order, as they sum.
        let order = waveform.byFirstFrame
        let begun = order.partitionPoint { waveform.firstFrames[$0] >= end }
        let notEnded = waveform.latestEnds[..<begun].partitionPoint { $0 > frame }
        for voice in order[notEnded..<begun].sorted() {
            let first = Swift.max(waveform.firstFrames[voice], frame)
            let last = Swift.min(waveform.endFrames[voice], end)
            guard first < last else { continue }
            var memo = CarrierMemo()
            var loudest = Carrier(frequency: 0, amplitude: 0)
            var look = first
            while look < last {
                let carrier = waveform.carrier(of: voice, at: look, memo: &memo)
                if carrier.amplitude > loudest.amplitude || loudest.frequency == 0 {
                    loudest = Carrier(frequency: carrier.frequency, amplitude: carrier.amplitude)
                }
                look += Self.framesPerLook
            }
            found.append(loudest)
        }
        switch waveform.locality {
        case .leftHandle, .leftTrigger: return (found, [])
        case .rightHandle, .rightTrigger: return ([], found)
        default: return (found, found)
        }
    }

    /// What both actuators play for the update covering `count` frames from `frame`, this pattern alone.
    public func bands(from frame: Int, count: Int) -> (left: ActuatorBands, right: ActuatorBands) {
        let carriers = carriers(from: frame, count: count)
        return (
            ActuatorBands.mixing(carriers.left, crossover: crossover),
            ActuatorBands.mixing(carriers.right, crossover: crossover)
        )
    }
}
