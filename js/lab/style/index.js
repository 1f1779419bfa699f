import './index.css';
// The finished-turn view's styles (js/src/styles.css, bundled into ../view by js/'s build).
import '../view/turn_view.css';
// The finished comparison's styles (js/src/compare/compare.css, bundled into ../view).
import '../view/compare_bundle.css';
