// snippet:module-info
module my.app {
  requires org.jperfetto;
}
// end-snippet
