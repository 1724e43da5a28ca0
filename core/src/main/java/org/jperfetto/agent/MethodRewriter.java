package org.jperfetto.agent;

import org.jperfetto.agent.boot.MethodHooks;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.commons.AdviceAdapter;

/**
 * Rewrites the matching methods of one class file: {@code MethodHooks.enter(id)} first (in a
 * constructor, after its super or this call), {@code MethodHooks.exit(id)} before each return, and
 * a catch-all handler around the body that calls {@code exit(id)} and rethrows, so a slice also
 * ends when an exception leaves the method. Nothing else changes (no new fields, methods or
 * branches in the method itself), so it is also a valid retransformation of a loaded class.
 *
 * <p>Frames are not recomputed (that would load classes from inside a transformer): the reader
 * expands the original frames, and the one new frame, at the handler, holds no locals and the
 * Throwable, which every point of the method is compatible with.
 */
final class MethodRewriter {
  static final String HOOKS = Type.getInternalName(MethodHooks.class);

  /** Assigns ids (and slice names) to the rewritten methods. */
  interface Ids {
    int idFor(String sliceName);
  }

  private MethodRewriter() {}

  /**
   * The rewritten class file, or null if no method of it matches.
   *
   * @param className the dotted binary name
   */
  static byte[] rewrite(byte[] classFile, String className, MethodPatterns patterns, Ids ids) {
    ClassReader reader = new ClassReader(classFile);
    if ((reader.getAccess() & Opcodes.ACC_INTERFACE) != 0 && (reader.getAccess() & Opcodes.ACC_ANNOTATION) != 0) {
      return null;
    }
    ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
    String simple = className.substring(className.lastIndexOf('.') + 1);
    int[] rewritten = {0};
    ClassVisitor cv = new ClassVisitor(Opcodes.ASM9, writer) {
      private int version;

      @Override
      public void visit(int v, int access, String name, String signature, String superName, String[] interfaces) {
        version = v & 0xFFFF;
        super.visit(v, access, name, signature, superName, interfaces);
      }

      @Override
      public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
          String[] exceptions) {
        MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
        int skip = Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE | Opcodes.ACC_SYNTHETIC | Opcodes.ACC_BRIDGE;
        if ((access & skip) != 0 || !patterns.matches(className, name)) {
          return mv;
        }
        rewritten[0]++;
        int id = ids.idFor(simple + "." + (name.equals("<init>") ? simple : name));
        return new SliceAdvice(mv, access, name, descriptor, id, version >= Opcodes.V1_6);
      }
    };
    reader.accept(cv, ClassReader.EXPAND_FRAMES);
    return rewritten[0] == 0 ? null : writer.toByteArray();
  }

  private static final class SliceAdvice extends AdviceAdapter {
    private final int id;
    private final boolean frames;
    private final Label start = new Label();
    private boolean entered;

    SliceAdvice(MethodVisitor mv, int access, String name, String descriptor, int id, boolean frames) {
      super(Opcodes.ASM9, mv, access, name, descriptor);
      this.id = id;
      this.frames = frames;
    }

    @Override
    protected void onMethodEnter() {
      hook("enter");
      visitLabel(start);
      entered = true;
    }

    @Override
    protected void onMethodExit(int opcode) {
      if (opcode != ATHROW) {
        hook("exit"); // a throw either is caught in the method or reaches the handler below
      }
    }

    @Override
    public void visitMaxs(int maxStack, int maxLocals) {
      if (entered) {
        Label handler = new Label();
        visitLabel(handler);
        if (frames) {
          super.visitFrame(F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
        }
        hook("exit");
        super.visitInsn(ATHROW);
        // Last in the exception table: the method's own handlers, listed before, match first.
        super.visitTryCatchBlock(start, handler, handler, null);
      }
      super.visitMaxs(maxStack, maxLocals);
    }

    private void hook(String method) {
      push(id);
      super.visitMethodInsn(INVOKESTATIC, HOOKS, method, "(I)V", false);
    }
  }
}
