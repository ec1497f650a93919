// The HD rumble of a Switch Pro Controller report (0x10, rumble only, or 0x01, rumble plus a subcommand), as the
// emulated controller decoded it: both bands of both actuators, with the report's packet counter. Part of the
// record (`PadRecord.hdRumble`); the hold-last model (`SwitchRumblePlayback`) plays it.
package import LinuxInput

/// One report's rumble, decoded. Amplitudes are 0...1 of the amplitude table's largest step (1.003, the
/// strongest the driver sends and the safe maximum): multiply by 1.003 for the table's own amplitude.
public struct SwitchRumblePacket: Equatable, Hashable, Sendable, Codable {
    /// One linear resonant actuator: two bands, each with its frequency (Hz, as the frequency table names
    /// it) and amplitude.
    public struct Actuator: Equatable, Hashable, Sendable, Codable {
        public var lowFrequency: Double
        public var lowAmplitude: Double
        public var highFrequency: Double
        public var highAmplitude: Double

        public init(lowFrequency: Double, lowAmplitude: Double, highFrequency: Double, highAmplitude: Double) {
            self.lowFrequency = lowFrequency
            self.lowAmplitude = lowAmplitude
            self.highFrequency = highFrequency
            self.highAmplitude = highAmplitude
        }

        init(_ decoded: SwitchRumbleActuator) {
            self.init(
                lowFrequency: decoded.lowFrequency, lowAmplitude: decoded.lowAmplitude,
                highFrequency: decoded.highFrequency, highAmplitude: decoded.highAmplitude)
        }

        /// Neither band moves the actuator.
        public var isAtRest: Bool { lowAmplitude == 0 && highAmplitude == 0 }

        /// The band with the larger amplitude, as (frequency, amplitude); the low band when both are equal, nil
        /// when both are 0.
        public var dominantBand: (frequency: Double, amplitude: Double)? {
            if isAtRest { return nil }
            return highAmplitude > lowAmplitude ? (highFrequency, highAmplitude) : (lowFrequency, lowAmplitude)
        }
    }

    /// Byte 1 of the report as received: the packet counter (the controller reads its low four bits).
    public var counter: Int
    /// Whether the controller plays the frame: false until the driver enabled vibration (subcommand 0x48);
    /// before that it ignores rumble, and the frame is recorded as received but plays as rest.
    public var played: Bool
    public var left: Actuator
    public var right: Actuator

    public init(counter: Int, played: Bool, left: Actuator, right: Actuator) {
        self.counter = counter
        self.played = played
        self.left = left
        self.right = right
    }

    /// A frame as the controller decodes it from its eight rumble bytes.
    package init(counter: UInt8, played: Bool, frame: SwitchRumbleFrame) {
        self.init(counter: Int(counter), played: played, left: Actuator(frame.left), right: Actuator(frame.right))
    }

    /// Both actuators still (every amplitude 0, as in the neutral frame `00 01 40 40`), or the frame ignored.
    public var isAtRest: Bool { !played || (left.isAtRest && right.isAtRest) }
}
