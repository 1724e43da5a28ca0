/**
 * Perfetto's shared memory buffer (SMB) ABI, bit for bit: {@link org.jperfetto.abi.PageHeader} and
 * {@link org.jperfetto.abi.ChunkHeader} layouts, the {@link org.jperfetto.abi.PageLayout} and
 * {@link org.jperfetto.abi.ChunkState} values, the chunk state machine
 * {@link org.jperfetto.abi.SharedMemoryAbi}, the rules for fragment sizes
 * ({@link org.jperfetto.abi.PacketFragments}) and the service's validating
 * {@link org.jperfetto.abi.UntrustedChunkReader}. Depends on java.base and the wire toolkit
 * ({@code org.jperfetto.wire}, for the varints) only; internal to the module.
 */
package org.jperfetto.abi;
