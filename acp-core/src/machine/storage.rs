//! Where a machine's table keeps its rows: fixed capacity without `alloc`, growable with it.
//!
//! Tables here are small (sessions of one connection, requests in flight), so a vector
//! searched linearly beats a map and keeps insertion order, which makes outputs
//! deterministic. The table itself enforces its configured limit; the storage only says
//! whether it physically has room.

/// The rows of a table, in insertion order.
pub trait Table<T> {
    /// The rows.
    fn rows(&self) -> &[T];
    /// The rows, mutably.
    fn rows_mut(&mut self) -> &mut [T];
    /// Appends a row, or hands it back when there is no room.
    fn try_push(&mut self, row: T) -> Result<(), T>;
    /// Removes and returns the row at `index`, keeping the order of the others.
    ///
    /// Callers pass an index below `rows().len()`.
    fn remove_at(&mut self, index: usize) -> T;
    /// The most rows this storage can ever hold (`usize::MAX` when growable).
    fn max_rows(&self) -> usize;
}

impl<T, const N: usize> Table<T> for heapless::Vec<T, N> {
    fn rows(&self) -> &[T] {
        self.as_slice()
    }
    fn rows_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
    fn try_push(&mut self, row: T) -> Result<(), T> {
        self.push(row)
    }
    fn remove_at(&mut self, index: usize) -> T {
        self.remove(index)
    }
    fn max_rows(&self) -> usize {
        N
    }
}

#[cfg(feature = "alloc")]
impl<T> Table<T> for alloc::vec::Vec<T> {
    fn rows(&self) -> &[T] {
        self.as_slice()
    }
    fn rows_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
    fn try_push(&mut self, row: T) -> Result<(), T> {
        self.push(row);
        Ok(())
    }
    fn remove_at(&mut self, index: usize) -> T {
        self.remove(index)
    }
    fn max_rows(&self) -> usize {
        usize::MAX
    }
}
