extension String {
    /// The text of a sysfs attribute or udev property without leading and trailing whitespace.
    var sysfsTrimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    /// The text as a number (the kernel writes integers, some drivers decimals); `nil` when it is
    /// not a finite number.
    var sysfsNumber: Double? {
        guard let value = Double(sysfsTrimmed), value.isFinite else { return nil }
        return value
    }
}
