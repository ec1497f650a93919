// What the rumble playback models share: the commands a pad received, in arrival order, and the one in effect
// at a moment (the last to arrive by then).

extension Array {
    /// How many of the elements arrived at or before `time`, for elements in arrival order (arrivals never
    /// decrease: the emulator stamps them on one thread with a monotonic clock). A binary search.
    func countArrived(by time: Double, arrival: (Element) -> Double) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if arrival(self[middle]) <= time { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
